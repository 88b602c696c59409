/// `POST /v1/voices/clone`: a voice made from uploaded clips (ElevenLabs instant voice cloning).
public struct VoiceCloneRequest: Codable, Sendable, Equatable {
    public var name: String
    /// Ids of clips uploaded with `POST /v1/clips`: 10 s to 5 min of audio in all, at most 25.
    public var clips: [String]
    public var description: String?
    public var removeBackgroundNoise: Bool?

    public init(name: String, clips: [String], description: String? = nil, removeBackgroundNoise: Bool? = nil) {
        self.name = name
        self.clips = clips
        self.description = description
        self.removeBackgroundNoise = removeBackgroundNoise
    }

    enum CodingKeys: String, CodingKey {
        case name, clips, description
        case removeBackgroundNoise = "remove_background_noise"
    }
}

/// The cloned voice, usable at once as a render's `voice`.
public struct VoiceCloneResponse: Codable, Sendable, Equatable {
    /// `elevenlabs:<voice_id>`.
    public var id: String
    public var name: String
    public var requiresVerification: Bool

    public init(id: String, name: String, requiresVerification: Bool) {
        self.id = id
        self.name = name
        self.requiresVerification = requiresVerification
    }

    enum CodingKeys: String, CodingKey {
        case id, name
        case requiresVerification = "requires_verification"
    }
}
