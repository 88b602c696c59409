import ChorusAudio
import ChorusSpeech
import ChorusText
public import ChorusWire

extension Conversation {
    /// A message as given, before it is checked: a conversation file's, or a service request's once its clip is found.
    public struct Draft: Sendable {
        public var speaker: String
        public var audio: Audio?
        public var text: String?
        /// A voice id as written (`provider:voice`).
        public var voice: String?
        /// The gap before it, as written (`gap_ms`).
        public var gapMilliseconds: Int?
        /// Whether its clip is cleaned up (`cleanup`; `nil`: as the conversation says).
        public var cleanup: Bool?

        public init(
            speaker: String, audio: Audio? = nil, text: String? = nil, voice: String? = nil, gapMilliseconds: Int? = nil,
            cleanup: Bool? = nil
        ) {
            self.speaker = speaker
            self.audio = audio
            self.text = text
            self.voice = voice
            self.gapMilliseconds = gapMilliseconds
            self.cleanup = cleanup
        }
    }

    /// The one validation of a conversation, for conversation files (`parse`) and the service's requests alike:
    ///
    /// - at least one message;
    /// - `gap_ms` in `RenderOptions.gapRange` (default `RenderOptions.defaultGapMilliseconds`);
    /// - each message: a speaker that is not blank; text that is only whitespace counts as none; a clip or text;
    ///   a voice, if given, of the form `provider:voice`; a gap, if given, in `RenderOptions.messageGapRange`; the text's
    ///   controls (`SpeechControls`, `[pause:800ms]`) well-formed, and only in text that is synthesized;
    /// - `voices`: each a voice id; `voice_settings`: each provider's value an object (providers lowercased);
    /// - the fallback voice, if given, a voice id.
    ///
    /// - Parameters:
    ///   - drafts: the messages, in order.
    ///   - gapMilliseconds: the silence between messages, `nil` for the default.
    ///   - voices: speaker → voice id, as written.
    ///   - voiceSettings: provider → that provider's settings.
    ///   - fallbackVoice: the fallback voice as written, and the field it came from.
    ///   - audioFields: how the caller's format names a message's clip, for the error of a message with neither
    ///     (`"audio" (a clip)`; the service: `"clip" or "audio_base64"`).
    ///   - name: where the conversation came from, for messages.
    ///   - intro: the clip or spoken line before the first message (`speaker` may be empty for a clip; a spoken one
    ///     needs a speaker).
    ///   - outro: the clip or spoken line after the last message, as `intro`.
    /// - Throws: `ConversationError` (`AudioError.invalidArgument` for a gap, `TextError` for a text's controls) whose `subject` is the field
    ///   (`messages[2].speaker`, `voices.Sarah`, `voice_settings.openai`, `gap_ms`) and whose `reason` says why.
    public static func validated(
        _ drafts: [Draft], gapMilliseconds: Int?, voices: [String: String] = [:],
        voiceSettings: [String: JSONValue] = [:], fallbackVoice: (text: String, field: String)? = nil,
        audioFields: String, name: String, intro: Draft? = nil, outro: Draft? = nil
    ) throws -> Conversation {
        guard !drafts.isEmpty else { throw ConversationError(subject: "messages", reason: "must not be empty") }
        let gap = gapMilliseconds ?? RenderOptions.defaultGapMilliseconds
        try RenderOptions.validate(gapMilliseconds: gap)
        var messages: [Message] = []
        for (index, draft) in drafts.enumerated() {
            let field = "messages[\(index)]"
            guard !draft.speaker.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty else {
                throw ConversationError(subject: "\(field).speaker", reason: "must not be empty")
            }
            let text = draft.text?.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty == false ? draft.text : nil
            guard draft.audio != nil || text != nil else {
                throw ConversationError(subject: field, reason: "needs \(audioFields) or \"text\" (words to synthesize)")
            }
            if let gap = draft.gapMilliseconds { try RenderOptions.validate(messageGapMilliseconds: gap, field: "\(field).gap_ms") }
            try Self.checkControls(text, recorded: draft.audio != nil, field: "\(field).text")
            var message = Message(
                speaker: draft.speaker, audio: draft.audio, text: text,
                voice: try draft.voice.map { try Self.voice($0, field: "\(field).voice") },
                gapMilliseconds: draft.gapMilliseconds)
            message.cleanup = draft.cleanup
            messages.append(message)
        }
        var voiceMap: [String: VoiceID] = [:]
        for (speaker, id) in voices { voiceMap[speaker] = try Self.voice(id, field: "voices.\(speaker)") }
        var settings: [String: [String: JSONValue]] = [:]
        for (provider, value) in voiceSettings {
            guard let object = value.object else {
                throw ConversationError(subject: "voice_settings.\(provider)", reason: "must be an object")
            }
            settings[provider.lowercased()] = object
        }
        func bookend(_ draft: Draft?, _ field: String) throws -> Message? {
            guard let draft else { return nil }
            let text = draft.text?.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty == false ? draft.text : nil
            let speaker = draft.speaker.trimmingCharacters(in: .whitespacesAndNewlines)
            guard draft.audio != nil || text != nil else {
                throw ConversationError(
                    subject: field, reason: "needs \(audioFields) or \"speaker\" and \"text\" (a line to synthesize)")
            }
            try Self.checkControls(text, recorded: draft.audio != nil, field: "\(field).text")
            if draft.audio == nil && speaker.isEmpty {
                throw ConversationError(subject: "\(field).speaker", reason: "a spoken \(field) needs the speaker who says it")
            }
            return Message(
                speaker: draft.speaker, audio: draft.audio, text: text,
                voice: try draft.voice.map { try Self.voice($0, field: "\(field).voice") })
        }
        var conversation = Conversation(
            messages: messages, gapMilliseconds: gap, voices: voiceMap, voiceSettings: settings,
            fallbackVoice: try fallbackVoice.map { try Self.voice($0.text, field: $0.field) }, name: name)
        conversation.intro = try bookend(intro, "intro")
        conversation.outro = try bookend(outro, "outro")
        return conversation
    }

    /// A text's controls (`SpeechControls`): well-formed, and only where the text is synthesized (a recorded clip's
    /// text is what was said).
    static func checkControls(_ text: String?, recorded: Bool, field: String) throws {
        guard let text, SpeechControls.contains(text) || SSML.isSSML(text) else { return }
        if recorded {
            throw ConversationError(
                subject: field,
                reason: "controls such as [pause:800ms] and SSML are for text to synthesize; this message is a recorded clip")
        }
        if SSML.isSSML(text) {
            guard try SSML.parts(of: text, field: field).contains(where: { if case .text = $0 { true } else { false } }) else {
                throw ConversationError(subject: field, reason: "the SSML has no text to say")
            }
        } else {
            _ = try SpeechControls.parts(of: text, field: field)
        }
    }

    /// `text` as a voice id (`provider:voice`).
    /// - Throws: `ConversationError` about `field`.
    static func voice(_ text: String, field: String) throws -> VoiceID {
        guard let parsed = VoiceID(text) else {
            throw ConversationError(subject: field, reason: "\(OrderedJSON.quote(text)) is not a voice id of the form provider:voice")
        }
        return parsed
    }
}
