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
