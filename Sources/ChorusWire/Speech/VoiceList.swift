/// `GET /v1/voices`.
public struct VoiceList: Codable, Sendable, Equatable {
    public struct Voice: Codable, Sendable, Equatable {
        /// `provider:voice`, usable in renders.
        public var id: String
        public var provider: String
        public var name: String
        public var language: String?
        public var gender: String?

        public init(id: String, provider: String, name: String, language: String? = nil, gender: String? = nil) {
            self.id = id
            self.provider = provider
            self.name = name
            self.language = language
            self.gender = gender
        }
    }

    public var voices: [Voice]

    public init(voices: [Voice]) { self.voices = voices }
}
