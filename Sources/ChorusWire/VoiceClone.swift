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

/// `GET /health`.
public struct HealthResponse: Codable, Sendable, Equatable {
    public var status: String
    public var version: String
    /// Whether `/v1/audio/transcriptions` can answer with the offline model, and if not why.
    public var transcription: TranscriptionHealth?
    /// Each `model` name the transcription routes answer, and whether who answers it can (the offline model's state,
    /// or a remote provider's: `ready`, or `unavailable` without its key).
    public var transcriptionModels: [String: TranscriptionHealth]?

    public init(status: String, version: String, transcription: TranscriptionHealth? = nil, transcriptionModels: [String: TranscriptionHealth]? = nil)
    {
        self.status = status
        self.version = version
        self.transcription = transcription
        self.transcriptionModels = transcriptionModels
    }

    enum CodingKeys: String, CodingKey {
        case status, version, transcription
        case transcriptionModels = "transcription_models"
    }
}

/// The offline recognizer's state: `loading` (at start), `ready`, `unavailable` (with the reason: no model
/// installed, a broken file) or `off`.
public struct TranscriptionHealth: Codable, Sendable, Equatable {
    public var status: String
    public var model: String?
    public var reason: String?

    public init(status: String, model: String? = nil, reason: String? = nil) {
        self.status = status
        self.model = model
        self.reason = reason
    }
}
