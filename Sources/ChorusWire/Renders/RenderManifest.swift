/// What the service says about a render: `POST /v1/renders`, `GET /v1/renders/{id}`, the SSE `done` event.
///
/// While it runs, `status` is `queued` or `running` with `progress`; when it is `done`, every output
/// field and URL is set and `timeline` is the CLI's timeline JSON; when it `failed`, `error` says why.
public struct RenderManifest: Codable, Sendable, Equatable {
    public enum Status: String, Codable, Sendable {
        case queued, running, done, failed
    }

    public var id: String
    public var status: Status
    public var progress: RenderProgressBody?
    public var format: String?
    /// Seconds, derived from `samples`.
    public var duration: Double?
    public var samples: Int?
    public var sampleRate: Int?
    public var channels: Int?
    public var audioURL: String?
    public var timelineURL: String?
    public var waveformURL: String?
    public var captionsURL: String?
    public var playerURL: String?
    /// ISO 8601.
    public var createdAt: String
    /// ISO 8601: after this the render and its files are deleted.
    public var expiresAt: String
    public var timeline: Timeline?
    public var error: ErrorBody.Detail?

    public init(id: String, status: Status, createdAt: String, expiresAt: String) {
        self.id = id
        self.status = status
        self.createdAt = createdAt
        self.expiresAt = expiresAt
    }

    enum CodingKeys: String, CodingKey {
        case id, status, progress, format, duration, samples
        case sampleRate = "sample_rate"
        case channels
        case audioURL = "audio_url"
        case timelineURL = "timeline_url"
        case waveformURL = "waveform_url"
        case captionsURL = "captions_url"
        case playerURL = "player_url"
        case createdAt = "created_at"
        case expiresAt = "expires_at"
        case timeline, error
    }
}

/// How far a render has come.
public struct RenderProgressBody: Codable, Sendable, Equatable {
    /// Messages whose audio exists (recorded clips count at once; text when synthesized).
    public var synthesized: Int
    /// Messages placed in the output, in order.
    public var rendered: Int
    public var total: Int

    public init(synthesized: Int, rendered: Int, total: Int) {
        self.synthesized = synthesized
        self.rendered = rendered
        self.total = total
    }
}
