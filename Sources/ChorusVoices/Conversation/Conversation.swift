public import ChorusAudio
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
    /// - Throws: `AudioError.invalidConversation` naming `field` or `field.provider`.
    public static func textNormalization(_ value: JSONValue, field: String) throws -> [String: Bool] {
        switch value {
        case .bool(let all): return ["*": all]
        case .object(let providers):
            var result: [String: Bool] = [:]
            for (provider, value) in providers {
                guard case .bool(let on) = value else {
                    throw AudioError(.invalidConversation, subject: "\(field).\(provider)", reason: "must be true or false")
                }
                result[provider.lowercased()] = on
            }
            return result
        default:
            throw AudioError(.invalidConversation, subject: field, reason: "must be true, false, or {provider: true|false}")
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

    public init(messages: [Message], gapMilliseconds: Int = RenderOptions.defaultGapMilliseconds, voices: [String: VoiceID] = [:],
                voiceSettings: [String: [String: JSONValue]] = [:], fallbackVoice: VoiceID? = nil, name: String = "conversation",
                transcribe: Bool = true) {
        self.messages = messages
        self.transcribe = transcribe
        self.fallbackVoice = fallbackVoice
        self.gapMilliseconds = gapMilliseconds
        self.voices = voices
        self.voiceSettings = voiceSettings
        self.name = name
    }

    /// Reads and validates a conversation file; clip paths are relative to its folder.
    /// - Throws: `AudioError` (`fileNotFound`, `invalidConversation`) naming the file and, for a bad message,
    ///   its index and field (`messages[2].speaker: missing required field`).
    public static func load(from url: URL) throws -> Conversation {
        let data: Data
        do {
            data = try Data(contentsOf: url)
        } catch {
            let exists = FileManager.default.fileExists(atPath: url.path)
            throw AudioError(exists ? .unreadable : .fileNotFound, subject: url.path, reason: exists ? "cannot read" : "no such file")
        }
        return try parse(data, baseDirectory: url.deletingLastPathComponent(), name: url.path)
    }

    /// Parses conversation JSON held in memory; `audio` paths are resolved against `baseDirectory`.
    /// - Throws: `AudioError.invalidConversation` about `name`, naming the field (`messages[2].speaker: must not be empty`).
    public static func parse(_ data: Data, baseDirectory: URL, name: String) throws -> Conversation {
        let raw: RawConversation
        do {
            raw = try JSONDecoder().decode(RawConversation.self, from: data)
        } catch let error as DecodingError {
            throw AudioError(.invalidConversation, subject: name, reason: DecodingErrorText.describe(error))
        }
        do {
            /// The clip at `path` (relative to the file's folder), named by `field` when it is blank.
            func clip(_ path: String?, _ field: String) throws -> Audio? {
                guard let path else { return nil }
                guard !path.trimmingCharacters(in: .whitespaces).isEmpty else {
                    throw AudioError(.invalidConversation, subject: "\(field).audio", reason: "must not be empty")
                }
                let url = path.hasPrefix("/") ? URL(fileURLWithPath: path) : baseDirectory.appendingPathComponent(path).standardizedFileURL
                return .file(url, label: path)
            }
            let drafts = try raw.messages.enumerated().map { index, message in
                Draft(speaker: message.speaker, audio: try clip(message.audio, "messages[\(index)]"), text: message.text, voice: message.voice,
                      gapMilliseconds: message.gap_ms, cleanup: message.cleanup)
            }
            func bookend(_ raw: RawBookend?, _ field: String) throws -> Draft? {
                try raw.map { Draft(speaker: $0.speaker ?? "", audio: try clip($0.audio, field), text: $0.text, voice: $0.voice) }
            }
            var conversation = try validated(drafts, gapMilliseconds: raw.gap_ms, voices: raw.voices ?? [:],
                                             voiceSettings: raw.voice_settings ?? [:], audioFields: #""audio" (a clip)"#, name: name,
                                             intro: try bookend(raw.intro, "intro"), outro: try bookend(raw.outro, "outro"))
            conversation.transcribe = raw.transcribe ?? true
            conversation.cleanup = try raw.cleanup?.settings(field: "cleanup")
            conversation.music = try raw.music.map { raw in
                guard raw.clip == nil && raw.audioBase64 == nil else {
                    throw AudioError(.invalidConversation, subject: "music", reason: "a conversation file names the bed's file as \"audio\"")
                }
                guard let audio = try clip(raw.audio, "music") else {
                    throw AudioError(.invalidConversation, subject: "music.audio", reason: "missing required field (the bed's audio file)")
                }
                return try raw.bed(audio.clipSource, label: audio.label)
            }
            conversation.loudnessPreset = try raw.loudness_preset.map { try LoudnessPreset(validating: $0, field: "loudness_preset") }
            conversation.lexicon = try raw.lexicon.map { try Lexicon(json: $0, field: "lexicon") }
            conversation.textNormalization = try raw.normalize_text.map { try Conversation.textNormalization($0, field: "normalize_text") } ?? [:]
            conversation.textReading = try TextReading.validated(language: raw.language, emoji: raw.emoji)
            return conversation
        } catch let error as AudioError {
            throw error.about(name, code: .invalidConversation)
        }
    }

    /// The settings of `provider` (an empty object when the conversation gives none).
    public func settings(for provider: String) -> [String: JSONValue] { voiceSettings[provider] ?? [:] }
}

private struct RawConversation: Decodable {
    var gap_ms: Int?
    var messages: [RawMessage]
    var voices: [String: String]?
    var voice_settings: [String: JSONValue]?
    var transcribe: Bool?
    var loudness_preset: String?
    var intro: RawBookend?
    var outro: RawBookend?
    var music: RenderRequest.Music?
    var cleanup: RenderRequest.Cleanup?
    var lexicon: [String: JSONValue]?
    var normalize_text: JSONValue?
    var language: String?
    var emoji: String?
}

extension RenderRequest.Music {
    /// The bed these settings ask for, with `source` as its audio (the engine's defaults for what is not given),
    /// checked: the one reading of `music` for conversation files and the service's requests.
    /// - Throws: `AudioError.invalidArgument` naming the field (`music.level_lu`).
    public func bed(_ source: ClipSource, label: String) throws -> MusicBed {
        let bed = MusicBed(source: source, label: label, levelLU: levelLU ?? MusicBed.defaultLevelLU, duckDB: duckDB ?? MusicBed.defaultDuckDB,
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
            return try VoiceCleanup.requested(on: true, highpassHz: raw.highpassHz, noiseReductionDB: raw.noiseReductionDB,
                                              declick: raw.declick, level: raw.level, maxSilenceMilliseconds: raw.maxSilenceMs, field: field)
        }
    }
}

private struct RawBookend: Decodable {
    var speaker: String?
    var audio: String?
    var text: String?
    var voice: String?
}

private struct RawMessage: Decodable {
    var speaker: String
    var audio: String?
    var text: String?
    var voice: String?
    var gap_ms: Int?
    var cleanup: Bool?
}
