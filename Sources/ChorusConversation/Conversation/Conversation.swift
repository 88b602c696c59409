public import ChorusAudio
public import ChorusSpeech
import ChorusSupport
public import ChorusText
public import ChorusWire
public import Foundation

/// An ordered list of messages to render into one file: who speaks, a recorded clip and/or the
/// words, the silence between messages, and which voice speaks each speaker's text.
///
/// This is the input of `Chorus.render`; `load(from:)` reads the conversation JSON of `chorus render`:
///
/// ```json
/// { "gap_ms": 300,
///   "intro": { "audio": "jingle.mp3" },
///   "outro": { "speaker": "Sarah", "text": "That was today's family news." },
///   "music": { "audio": "bed.mp3", "level_lu": -20, "duck_db": 12, "fade_in_ms": 1500, "fade_out_ms": 3000, "loop": true },
///   "voices": { "Marcus": "elevenlabs:JBFqnCBsd6RMkjVDRZzb" },
///   "speakers": { "Aisha": { "sounds": "female" } },
///   "messages": [ { "speaker": "Sarah", "audio": "clips/sarah-1.mp3", "text": "Practice moved to 4:30." },
///                 { "speaker": "Marcus", "text": "On my way." },
///                 { "speaker": "Aisha", "text": "Wait!", "gap_ms": -400 } ] }
/// ```
///
/// ```swift
/// let conversation = try Conversation.load(from: URL(fileURLWithPath: "samples/conversation.json"))
/// let spoken = Conversation(messages: [.init(speaker: "Sarah", text: "Dinner at seven.")])
/// ```
public struct Conversation: Sendable {
    /// One message: a speaker with a recorded clip, or words to synthesize, or both (the clip is used
    /// and the words go to the timeline and captions).
    public struct Message: Sendable {
        public var speaker: String
        public var audio: Audio?
        public var text: String?
        /// This message's voice, overriding the conversation's `voices` map.
        public var voice: VoiceID?
        /// The gap before this message, overriding the conversation's (`gap_ms`); negative: it starts that long
        /// before the previous message ends, both heard at once (`RenderOptions.messageGapRange`). Nothing comes
        /// before the first message, so its gap is not used.
        public var gapMilliseconds: Int?
        /// Whether its clip is cleaned up (`nil`: when the conversation's `cleanup` is set); only recorded clips are.
        public var cleanup: Bool?

        public init(speaker: String, audio: Audio? = nil, text: String? = nil, voice: VoiceID? = nil, gapMilliseconds: Int? = nil) {
            self.speaker = speaker
            self.audio = audio
            self.text = text
            self.voice = voice
            self.gapMilliseconds = gapMilliseconds
        }

        /// True when the message has words but no clip, so a voice must speak it.
        public var needsSynthesis: Bool { audio == nil }
    }

    /// A recorded clip, in any format FFmpeg decodes (recognised from its content).
    public enum Audio: Sendable {
        /// A file; `label` is how the timeline and errors name it (the path as written).
        case file(URL, label: String)
        /// Encoded bytes in memory (an upload); `label` names it.
        case data(Data, label: String)

        public var label: String {
            switch self {
            case .file(_, let label), .data(_, let label): return label
            }
        }

        /// The clip as the engine reads it.
        public var clipSource: ClipSource {
            switch self {
            case .file(let url, _): return .file(url)
            case .data(let data, _): return .encoded(data)
            }
        }
    }

    public var messages: [Message]
    /// Played before the first message, the conversation's gap before it: a clip (a jingle), or a line a speaker says
    /// (`speaker` and `text`, spoken by that speaker's voice). Its `speaker` is empty for a clip.
    public var intro: Message?
    /// Played the conversation's gap after the last message, as `intro`.
    public var outro: Message?
    /// Music under the whole program, ducked under speech (`MusicBed`).
    public var music: MusicBed?
    /// Clean-up for every recorded message that does not say otherwise (`VoiceCleanup`; `nil`: only for messages that
    /// ask, with the default settings).
    public var cleanup: VoiceCleanup?

    /// The clean-up message `message` gets, if any: only a recorded clip is cleaned up.
    public func cleanup(for message: Message) -> VoiceCleanup? {
        guard message.audio != nil, message.cleanup != false else { return nil }
        return message.cleanup == true ? cleanup ?? VoiceCleanup() : cleanup
    }
    /// Silence between messages, milliseconds (`RenderOptions.gapRange`).
    public var gapMilliseconds: Int
    /// Speaker name → voice.
    public var voices: [String: VoiceID]
    /// Speaker name → what the speaker sounds like (`"speakers": {"Mom": {"sounds": "female"}}`), for speakers given a
    /// default voice (`VoiceAssignment`).
    public var speakerSounds: [String: VoiceSound] = [:]
    /// Provider id → that provider's settings (`voice_settings.elevenlabs`, …).
    public var voiceSettings: [String: [String: JSONValue]]
    /// The voice for a message whose provider fails for good (its segment is marked `fallback`);
    /// `nil` fails the render instead.
    public var fallbackVoice: VoiceID?
    /// Where the conversation came from, for error messages.
    public var name: String
    /// The loudness its render is normalized to (`loudness_preset`), replacing the options' target and ceiling.
    public var loudnessPreset: LoudnessPreset?
    /// Pronunciations for the synthesized text (`"lexicon"`): aliases spoken in place of written words (`Lexicon`).
    public var lexicon: Lexicon?
    /// Whether text is read as people read it before synthesis (`TextNormalizer`), by provider (`"normalize_text"`: true or
    /// false for all, or per provider); a provider not named here: on for the offline voices (`offlineProviders`), off
    /// for services that normalize text themselves.
    public var textNormalization: [String: Bool] = [:]
    /// The language the text is written in and what becomes of emoji (`"language"`, `"emoji"`), where it is normalized.
    public var textReading = TextReading()
    /// Providers whose text is normalized unless the conversation says otherwise.
    public static let offlineProviders = BuiltInProvider.offline

    /// The one reading of `normalize_text` (conversation files and the service): `true`/`false` for every provider
    /// (`"*"`), or an object of provider → `true`/`false`.
    /// - Throws: `ConversationError` naming `field` or `field.provider`.
    public static func textNormalization(_ value: JSONValue, field: String) throws -> [String: Bool] {
        switch value {
        case .bool(let all): return ["*": all]
        case .object(let providers):
            var result: [String: Bool] = [:]
            for (provider, value) in providers {
                guard case .bool(let on) = value else {
                    throw ConversationError(subject: "\(field).\(provider)", reason: "must be true or false")
                }
                result[provider.lowercased()] = on
            }
            return result
        default:
            throw ConversationError(subject: field, reason: "must be true, false, or {provider: true|false}")
        }
    }

    /// Whether `provider`'s text is normalized.
    public func normalizesText(for provider: String) -> Bool {
        textNormalization[provider] ?? textNormalization["*"] ?? Self.offlineProviders.contains(provider)
    }
    /// Whether recorded messages get words (`"transcribe"`, default true): one without text is transcribed, one with
    /// text has it aligned to the recording, when the `Chorus` instance has a speech recognizer
    /// (`Chorus.Configuration.transcriber`).
    public var transcribe: Bool

    public init(
        messages: [Message], gapMilliseconds: Int = RenderOptions.defaultGapMilliseconds, voices: [String: VoiceID] = [:],
        voiceSettings: [String: [String: JSONValue]] = [:], fallbackVoice: VoiceID? = nil, name: String = "conversation",
        transcribe: Bool = true
    ) {
        self.messages = messages
        self.transcribe = transcribe
        self.fallbackVoice = fallbackVoice
        self.gapMilliseconds = gapMilliseconds
        self.voices = voices
        self.voiceSettings = voiceSettings
        self.name = name
    }

    /// Reads and validates a conversation file; clip paths are relative to its folder.
    /// - Throws: `ConversationError` (`fileNotFound`, `unreadable`, `invalid`) naming the file and, for a bad message,
    ///   its index and field (`messages[2].speaker: missing required field`).
    public static func load(from url: URL) throws -> Conversation {
        let data: Data
        do {
            data = try Data(contentsOf: url)
        } catch {
            let exists = FileManager.default.fileExists(atPath: url.path)
            throw ConversationError(exists ? .unreadable : .fileNotFound, subject: url.path, reason: exists ? "cannot read" : "no such file")
        }
        return try parse(data, baseDirectory: url.deletingLastPathComponent(), name: url.path)
    }

    /// Parses conversation JSON held in memory; `audio` paths are resolved against `baseDirectory`. A conversation file
    /// is a render request's JSON (`RenderRequest`, read by `init(request:…)` as the service reads one) whose clips are
    /// files named by `audio`; its `output` is the command's to give, and is not read.
    /// - Throws: `ConversationError` about `name`, naming the field (`messages[2].speaker: must not be empty`).
    public static func parse(_ data: Data, baseDirectory: URL, name: String) throws -> Conversation {
        var request: RenderRequest
        do {
            request = try JSONDecoder().decode(RenderRequest.self, from: data)
        } catch let error as DecodingError {
            throw ConversationError(subject: name, reason: DecodingErrorText.describe(error))
        }
        request.output = nil
        do {
            return try Conversation(request: request, name: name, audioFields: #""audio" (a clip)"#) { reference, field, required in
                guard reference.clip == nil && reference.audioBase64 == nil else {
                    throw ConversationError(subject: field, reason: "a conversation file names its clips' files as \"audio\"")
                }
                guard let path = reference.audio else {
                    guard !required else {
                        throw ConversationError(subject: "\(field).audio", reason: "missing required field (its audio file)")
                    }
                    return nil
                }
                guard !path.trimmingCharacters(in: .whitespaces).isEmpty else {
                    throw ConversationError(subject: "\(field).audio", reason: "must not be empty")
                }
                let url = path.hasPrefix("/") ? URL(fileURLWithPath: path) : baseDirectory.appendingPathComponent(path).standardizedFileURL
                return .file(url, label: path)
            }
        } catch let error as any InputError {
            throw ConversationError(error, about: name)
        }
    }

    /// Where a message's, a bookend's or the bed's audio is said to be: an uploaded clip's id, inline bytes, or a file.
    public struct AudioReference: Sendable, Equatable {
        public var clip: String?
        public var audioBase64: String?
        /// A file's path (conversation files; the service refuses it).
        public var audio: String?
    }

    /// The one reading of a conversation, from a file (`parse`) or the service's request: every field of `request`
    /// but `output` (the caller's: the command's flags, the service's output settings) checked and set.
    /// - Parameters:
    ///   - request: the conversation as written (a conversation file's JSON, or the service's request body).
    ///   - name: where it came from, for messages.
    ///   - audioFields: how the caller's format names a clip (`"audio" (a clip)`; the service: `"clip" or "audio_base64"`).
    ///   - fallbackVoice: the fallback voice as written, and its field.
    ///   - audio: the audio `reference` names (`field`: `messages[2]`, `intro`, `outro`, `music`), `nil` when it names
    ///     none; `required` (the bed's): it must name one, and the error says how the caller's format does.
    /// - Throws: `ConversationError` (or the `TextError` or `AudioError` of a field the text or audio layer refuses) whose
    ///   `subject` is the field, or what `audio` throws.
    public init(
        request: RenderRequest, name: String, audioFields: String, fallbackVoice: (text: String, field: String)? = nil,
        audio: (_ reference: AudioReference, _ field: String, _ required: Bool) throws -> Audio?
    ) throws {
        let drafts = try request.messages.enumerated().map { index, message in
            Draft(
                speaker: message.speaker, audio: try audio(message.reference, "messages[\(index)]", false), text: message.text, voice: message.voice,
                gapMilliseconds: message.gapMs, cleanup: message.cleanup)
        }
        func bookend(_ bookend: RenderRequest.Bookend?, _ field: String) throws -> Draft? {
            try bookend.map { Draft(speaker: $0.speaker ?? "", audio: try audio($0.reference, field, false), text: $0.text, voice: $0.voice) }
        }
        var conversation = try Self.validated(
            drafts, gapMilliseconds: request.gapMs, voices: request.voices ?? [:],
            voiceSettings: request.voiceSettings ?? [:], fallbackVoice: fallbackVoice,
            audioFields: audioFields, name: name,
            intro: try bookend(request.intro, "intro"), outro: try bookend(request.outro, "outro"))
        conversation.transcribe = request.transcribe ?? true
        for (speaker, traits) in (request.speakers ?? [:]).sorted(by: { $0.key < $1.key }) {
            guard let sounds = traits.sounds else { continue }
            guard let sound = VoiceSound(rawValue: sounds.lowercased()) else {
                throw ConversationError(
                    subject: "speakers.\(speaker).sounds",
                    reason: "\"\(sounds.prefix(40))\" is not \"female\" or \"male\"")
            }
            conversation.speakerSounds[speaker] = sound
        }
        conversation.cleanup = try request.cleanup?.settings(field: "cleanup")
        conversation.music = try request.music.map { music in
            guard let bed = try audio(music.reference, "music", true) else {
                throw ConversationError(subject: "music", reason: "missing required field (the bed's audio)")
            }
            return try music.bed(bed.clipSource, label: bed.label)
        }
        conversation.loudnessPreset = try request.loudnessPreset.map { try LoudnessPreset(validating: $0, field: "loudness_preset") }
        switch request.lexicon {
        case nil, .null?: break
        case .object(let entries)?: conversation.lexicon = try Lexicon(json: entries, field: "lexicon")
        default: throw ConversationError(subject: "lexicon", reason: "must be an object of entries")
        }
        conversation.textNormalization = try request.normalizeText.map { try Self.textNormalization($0, field: "normalize_text") } ?? [:]
        conversation.textReading = try TextReading.validated(language: request.language, emoji: request.emoji)
        self = conversation
    }

    /// The settings of `provider` (an empty object when the conversation gives none).
    public func settings(for provider: String) -> [String: JSONValue] { voiceSettings[provider] ?? [:] }
}

extension RenderRequest.Music {
    /// The bed these settings ask for, with `source` as its audio (the engine's defaults for what is not given),
    /// checked: the one reading of `music` for conversation files and the service's requests.
    /// - Throws: `AudioError.invalidArgument` naming the field (`music.level_lu`).
    public func bed(_ source: ClipSource, label: String) throws -> MusicBed {
        let bed = MusicBed(
            source: source, label: label, levelLU: levelLU ?? MusicBed.defaultLevelLU, duckDB: duckDB ?? MusicBed.defaultDuckDB,
            fadeInMilliseconds: fadeInMs ?? MusicBed.defaultFadeInMilliseconds,
            fadeOutMilliseconds: fadeOutMs ?? MusicBed.defaultFadeOutMilliseconds, loop: loop ?? true)
        try bed.validate(field: "music")
        return bed
    }
}

extension RenderRequest.Cleanup {
    /// The clean-up this asks for (`nil`: off), checked: the one reading of `cleanup` for conversation files and the
    /// service's requests (the same JSON: `true`, `false`, or settings).
    /// - Throws: `AudioError.invalidArgument` naming the field (`cleanup.highpass_hz`).
    public func settings(field: String = "cleanup") throws -> VoiceCleanup? {
        switch self {
        case .on(let on): return try VoiceCleanup.requested(on: on, field: field)
        case .settings(let raw):
            return try VoiceCleanup.requested(
                on: true, highpassHz: raw.highpassHz, noiseReductionDB: raw.noiseReductionDB,
                declick: raw.declick, level: raw.level, maxSilenceMilliseconds: raw.maxSilenceMs, field: field)
        }
    }
}

extension RenderRequest.Message {
    var reference: Conversation.AudioReference { .init(clip: clip, audioBase64: audioBase64, audio: audio) }
}

extension RenderRequest.Bookend {
    var reference: Conversation.AudioReference { .init(clip: clip, audioBase64: audioBase64, audio: audio) }
}

extension RenderRequest.Music {
    var reference: Conversation.AudioReference { .init(clip: clip, audioBase64: audioBase64, audio: audio) }
}
