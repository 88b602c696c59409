/// `GET /v1/voices`.
public struct VoiceList: Codable, Sendable, Equatable {
    public struct Voice: Codable, Sendable, Equatable {
        /// `provider:voice`, usable in renders.
        public var id: String
        public var provider: String
        public var name: String
        public var language: String?
        public var gender: String?
        /// ElevenLabs' field names for code written for its API: `voice_id` (the `id`), `category` (`cloned` for a
        /// voice made from one person's recordings, `generated` for one aimed at several people — Chorus's own English
        /// voices — else `premade`).
        public var voiceID: String?
        public var category: String?
        /// What a voice made from recordings was made from.
        public var made: MadeVoiceInfo?

        enum CodingKeys: String, CodingKey {
            case id, provider, name, language, gender, voiceID = "voice_id", category, made
        }

        public init(
            id: String, provider: String, name: String, language: String? = nil, gender: String? = nil, category: String? = nil,
            made: MadeVoiceInfo? = nil
        ) {
            self.id = id
            self.provider = provider
            self.name = name
            self.language = language
            self.gender = gender
            voiceID = id
            self.category = category
            self.made = made
        }
    }

    public var voices: [Voice]

    public init(voices: [Voice]) { self.voices = voices }
}
