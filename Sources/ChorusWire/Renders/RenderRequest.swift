/// `POST /v1/renders`: a conversation in the CLI's JSON format, where a message's audio is an
/// uploaded clip (`clip`) or inline bytes (`audio_base64`) — never a server path — plus output settings.
///
/// ```json
/// {"gap_ms": 300, "voices": {"Sarah": "espeak:en-us+f3"}, "speakers": {"Marcus": {"sounds": "male"}},
///  "messages": [{"speaker": "Sarah", "text": "Dinner at seven."}, {"speaker": "Marcus", "clip": "9f86d0…"}],
///  "output": {"format": "mp3", "loudness": -16}}
/// ```
public struct RenderRequest: Codable, Sendable, Equatable {
    public struct Message: Codable, Sendable, Equatable {
        public var speaker: String
        public var text: String?
        /// The id of a clip uploaded with `POST /v1/clips`.
        public var clip: String?
        /// A small clip inline, base64-encoded.
        public var audioBase64: String?
        /// Refused: the service never reads a server path.
        public var audio: String?
        /// A voice id (`provider:voice`) for this message.
        public var voice: String?
        /// The gap before this message, milliseconds, overriding the request's `gap_ms`; negative starts it that long
        /// before the previous message ends (an interruption, both heard at once).
        public var gapMs: Int?
        /// Whether its clip is cleaned up (default: as the request's `cleanup` says).
        public var cleanup: Bool?

        public init(
            speaker: String, text: String? = nil, clip: String? = nil, audioBase64: String? = nil, voice: String? = nil,
            gapMs: Int? = nil, cleanup: Bool? = nil
        ) {
            self.speaker = speaker
            self.text = text
            self.clip = clip
            self.audioBase64 = audioBase64
            self.voice = voice
            self.gapMs = gapMs
            self.cleanup = cleanup
        }

        enum CodingKeys: String, CodingKey {
            case speaker, text, clip
            case audioBase64 = "audio_base64"
            case audio, voice
            case gapMs = "gap_ms"
            case cleanup
        }
    }

    /// The intro or outro: a clip (`clip` or `audio_base64`), or a line `speaker` says (`text`, optional `voice`).
    public struct Bookend: Codable, Sendable, Equatable {
        public var speaker: String?
        public var text: String?
        /// The id of a clip uploaded with `POST /v1/clips`.
        public var clip: String?
        /// A small clip inline, base64-encoded.
        public var audioBase64: String?
        /// Refused: the service never reads a server path.
        public var audio: String?
        public var voice: String?

        public init(speaker: String? = nil, text: String? = nil, clip: String? = nil, audioBase64: String? = nil, voice: String? = nil) {
            self.speaker = speaker
            self.text = text
            self.clip = clip
            self.audioBase64 = audioBase64
            self.voice = voice
        }

        enum CodingKeys: String, CodingKey {
            case speaker, text, clip
            case audioBase64 = "audio_base64"
            case audio, voice
        }
    }

    /// Music under the whole program, ducked under speech: an uploaded clip or an inline one, and how it is set
    /// (the engine's defaults for what is not given: level −20 LU, duck 12 dB, fades 1500/3000 ms, looped).
    public struct Music: Codable, Sendable, Equatable {
        /// The id of a clip uploaded with `POST /v1/clips`.
        public var clip: String?
        /// A small clip inline, base64-encoded.
        public var audioBase64: String?
        /// Refused: the service never reads a server path.
        public var audio: String?
        public var levelLU: Double?
        public var duckDB: Double?
        public var fadeInMs: Int?
        public var fadeOutMs: Int?
        public var loop: Bool?

        public init(
            clip: String? = nil, audioBase64: String? = nil, levelLU: Double? = nil, duckDB: Double? = nil, fadeInMs: Int? = nil,
            fadeOutMs: Int? = nil, loop: Bool? = nil
        ) {
            self.clip = clip
            self.audioBase64 = audioBase64
            self.levelLU = levelLU
            self.duckDB = duckDB
            self.fadeInMs = fadeInMs
            self.fadeOutMs = fadeOutMs
            self.loop = loop
        }

        enum CodingKeys: String, CodingKey {
            case clip
            case audioBase64 = "audio_base64"
            case audio
            case levelLU = "level_lu"
            case duckDB = "duck_db"
            case fadeInMs = "fade_in_ms"
            case fadeOutMs = "fade_out_ms"
            case loop
        }
    }

    /// Clean-up of recorded messages: `true`/`false`, or settings (any given turns it on).
    public enum Cleanup: Codable, Sendable, Equatable {
        case on(Bool)
        case settings(Settings)

        public struct Settings: Codable, Sendable, Equatable {
            public var highpassHz: Int?
            public var noiseReductionDB: Double?
            public var declick: Bool?
            public var level: Bool?
            /// 0: pauses are kept.
            public var maxSilenceMs: Int?

            public init(highpassHz: Int? = nil, noiseReductionDB: Double? = nil, declick: Bool? = nil, level: Bool? = nil, maxSilenceMs: Int? = nil) {
                self.highpassHz = highpassHz
                self.noiseReductionDB = noiseReductionDB
                self.declick = declick
                self.level = level
                self.maxSilenceMs = maxSilenceMs
            }

            enum CodingKeys: String, CodingKey {
                case highpassHz = "highpass_hz"
                case noiseReductionDB = "noise_reduction_db"
                case declick, level
                case maxSilenceMs = "max_silence_ms"
            }
        }

        public init(from decoder: any Decoder) throws {
            if let on = try? decoder.singleValueContainer().decode(Bool.self) {
                self = .on(on)
            } else {
                self = .settings(try Settings(from: decoder))
            }
        }

        public func encode(to encoder: any Encoder) throws {
            switch self {
            case .on(let on):
                var container = encoder.singleValueContainer()
                try container.encode(on)
            case .settings(let settings): try settings.encode(to: encoder)
            }
        }
    }

    public var messages: [Message]
    /// Played before the first message, the gap before it.
    public var intro: Bookend?
    /// Played the gap after the last message.
    public var outro: Bookend?
    public var voices: [String: String]?
    /// Speaker name → what the speaker sounds like, for speakers the render gives a default voice.
    public var speakers: [String: Speaker]?
    /// Provider id → settings object, passed to that provider.
    public var voiceSettings: [String: JSONValue]?
    public var gapMs: Int?
    public var output: OutputSettings?
    /// Whether recorded messages get words (default true, when the service transcribes): one without text is
    /// transcribed, one with text has it aligned to the recording.
    public var transcribe: Bool?
    /// The loudness to publish to: `podcast`, `mono-podcast`, `streaming`, `broadcast` or `audiobook` (its target
    /// loudness and true-peak ceiling; not with `output.loudness`).
    public var loudnessPreset: String?
    /// Music under the whole program.
    public var music: Music?
    /// Clean-up of every recorded message (a message's own `cleanup` wins).
    public var cleanup: Cleanup?
    /// Text read as people read it before synthesis: `true`/`false` for every provider, or `{"elevenlabs": true}` per
    /// provider (default: on for the offline voices, off for services).
    public var normalizeText: JSONValue?
    /// Pronunciations: the name of a lexicon stored for the calling key (`PUT /v1/lexicons/{name}`), or the entries
    /// themselves (`{"Nguyen": "win", "Siobhan": {"ipa": "ʃɪˈvɔːn"}}`).
    public var lexicon: JSONValue?
    /// The language the text is written in (`en`, `en-GB`, `de`; default `en`): it chooses the normalizer's rules (a
    /// language without rules is read as written).
    public var language: String?
    /// Emoji between words where text is normalized: `drop` (default) or `name` (said by name).
    public var emoji: String?

    public init(
        messages: [Message], voices: [String: String]? = nil, speakers: [String: Speaker]? = nil, voiceSettings: [String: JSONValue]? = nil,
        gapMs: Int? = nil, output: OutputSettings? = nil, transcribe: Bool? = nil, loudnessPreset: String? = nil,
        intro: Bookend? = nil, outro: Bookend? = nil, music: Music? = nil, cleanup: Cleanup? = nil
    ) {
        self.messages = messages
        self.music = music
        self.cleanup = cleanup
        self.intro = intro
        self.outro = outro
        self.voices = voices
        self.speakers = speakers
        self.voiceSettings = voiceSettings
        self.gapMs = gapMs
        self.output = output
        self.transcribe = transcribe
        self.loudnessPreset = loudnessPreset
    }

    /// What a speaker is like: `{"sounds": "female"}`. Another field is refused (a misspelt one would be ignored).
    public struct Speaker: Codable, Sendable, Equatable {
        /// `female` or `male`: a speaker without a voice gets a default voice that sounds so.
        public var sounds: String?

        public init(sounds: String? = nil) { self.sounds = sounds }

        struct Field: CodingKey {
            var stringValue: String
            var intValue: Int? { nil }
            init(stringValue: String) { self.stringValue = stringValue }
            init?(intValue: Int) { nil }
        }

        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: Field.self)
            if let unknown = container.allKeys.map(\.stringValue).sorted().first(where: { $0 != "sounds" }) {
                throw DecodingError.dataCorruptedError(
                    forKey: Field(stringValue: unknown), in: container, debugDescription: "unknown field (known: sounds)")
            }
            sounds = try container.decodeIfPresent(String.self, forKey: Field(stringValue: "sounds"))
        }
    }

    enum CodingKeys: String, CodingKey {
        case messages, voices, speakers
        case voiceSettings = "voice_settings"
        case gapMs = "gap_ms"
        case output, transcribe
        case loudnessPreset = "loudness_preset"
        case intro, outro, music, cleanup
        case normalizeText = "normalize_text"
        case lexicon, language, emoji
    }
}

/// How a render is encoded and processed; every field is optional. The service's own defaults are below (the OpenAPI
/// document states the same, which a test checks); the rest are the engine's (`RenderOptions`).
public struct OutputSettings: Codable, Sendable, Equatable {
    /// The formats the service writes (the CLI also writes AIFF).
    public static let formats = ["mp3", "m4a", "ogg", "wav", "flac"]
    /// `format` when the request gives none.
    public static let defaultFormat = "mp3"
    /// `normalize`, `trim` and `chapters` when the request gives none: each message normalized and trimmed, one
    /// chapter per message in the file (the CLI writes chapters only with `--chapters`).
    public static let defaultNormalize = true
    public static let defaultTrim = true
    public static let defaultChapters = true

    /// One of `formats` (default `defaultFormat`).
    public var format: String?
    public var sampleRate: Int?
    public var channels: Int?
    /// Bits per second for mp3, m4a and ogg.
    public var bitrate: Int?
    /// Target loudness, LUFS.
    public var loudness: Double?
    public var normalize: Bool?
    public var trim: Bool?
    /// One chapter per message in the file (mp3, m4a, ogg); default `defaultChapters`.
    public var chapters: Bool?
    /// A voice for messages whose provider fails for good.
    public var fallbackVoice: String?

    public init(
        format: String? = nil, sampleRate: Int? = nil, channels: Int? = nil, bitrate: Int? = nil, loudness: Double? = nil,
        normalize: Bool? = nil, trim: Bool? = nil, chapters: Bool? = nil, fallbackVoice: String? = nil
    ) {
        self.format = format
        self.sampleRate = sampleRate
        self.channels = channels
        self.bitrate = bitrate
        self.loudness = loudness
        self.normalize = normalize
        self.trim = trim
        self.chapters = chapters
        self.fallbackVoice = fallbackVoice
    }

    enum CodingKeys: String, CodingKey {
        case format
        case sampleRate = "sample_rate"
        case channels, bitrate, loudness, normalize, trim, chapters
        case fallbackVoice = "fallback_voice"
    }
}
