/// What a voice made from recordings was made from, in voice lists (`GET /v1/voices`): never the recordings.
public struct MadeVoiceInfo: Codable, Sendable, Equatable {
    /// "chorus".
    public var madeBy: String
    /// ISO 8601.
    public var created: String
    /// People it was aimed at (1: a voice like one person's).
    public var people: Int
    public var recordings: Int
    public var speechSeconds: Double
    /// The speaker model's similarity of the voice to the recordings, and the nearest stock voice's.
    public var similarity: Double
    public var nearestStockSimilarity: Double
    /// Of three sentences' words, those Whisper heard wrong.
    public var wordErrorRate: Double?

    enum CodingKeys: String, CodingKey {
        case madeBy = "made_by", created, people, recordings, speechSeconds = "speech_seconds", similarity
        case nearestStockSimilarity = "nearest_stock_similarity", wordErrorRate = "word_error_rate"
    }

    public init(
        madeBy: String, created: String, people: Int, recordings: Int, speechSeconds: Double, similarity: Double,
        nearestStockSimilarity: Double, wordErrorRate: Double?
    ) {
        self.madeBy = madeBy
        self.created = created
        self.people = people
        self.recordings = recordings
        self.speechSeconds = speechSeconds
        self.similarity = similarity
        self.nearestStockSimilarity = nearestStockSimilarity
        self.wordErrorRate = wordErrorRate
    }
}

/// `POST /v1/voices/add`'s answer, as ElevenLabs gives it (`voice_id`, `requires_verification`), with where the
/// creation can be followed: the voice is listed by `GET /v1/voices` once it is made.
public struct VoiceAddResponse: Codable, Sendable, Equatable {
    /// `kokoro:<name>`: usable in renders and speech once made.
    public var voiceID: String
    public var requiresVerification: Bool
    /// `queued`, `making`, `ready`, `failed`, `cancelled`.
    public var status: String
    /// The job's path (`GET` it for progress).
    public var job: String

    enum CodingKeys: String, CodingKey {
        case voiceID = "voice_id", requiresVerification = "requires_verification", status, job
    }

    public init(voiceID: String, requiresVerification: Bool = false, status: String, job: String) {
        self.voiceID = voiceID
        self.requiresVerification = requiresVerification
        self.status = status
        self.job = job
    }
}

/// `GET /v1/voices/jobs/{id}`: a voice being made.
public struct VoiceJob: Codable, Sendable, Equatable {
    public var id: String
    public var voiceID: String
    public var name: String
    /// `queued`, `making`, `ready`, `failed`, `cancelled`.
    public var status: String
    /// 0–1: candidate voices heard of those the search hears.
    public var progress: Double
    /// The best candidate's similarity to the recordings so far.
    public var similarity: Double
    /// Why it failed.
    public var error: String?

    enum CodingKeys: String, CodingKey {
        case id, voiceID = "voice_id", name, status, progress, similarity, error
    }

    public init(id: String, voiceID: String, name: String, status: String, progress: Double, similarity: Double, error: String?) {
        self.id = id
        self.voiceID = voiceID
        self.name = name
        self.status = status
        self.progress = progress
        self.similarity = similarity
        self.error = error
    }
}
