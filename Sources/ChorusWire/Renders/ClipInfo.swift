/// `POST /v1/clips`: an uploaded recording, named by the SHA-256 of its bytes.
public struct ClipInfo: Codable, Sendable, Equatable {
    public var id: String
    /// Seconds, derived from `samples`.
    public var duration: Double
    /// Frames a decoder yields (encoder delay and padding excluded).
    public var samples: Int
    public var sampleRate: Int
    public var channels: Int
    public var codec: String
    public var container: String

    public init(id: String, duration: Double, samples: Int, sampleRate: Int, channels: Int, codec: String, container: String) {
        self.id = id
        self.duration = duration
        self.samples = samples
        self.sampleRate = sampleRate
        self.channels = channels
        self.codec = codec
        self.container = container
    }

    enum CodingKeys: String, CodingKey {
        case id, duration, samples
        case sampleRate = "sample_rate"
        case channels, codec, container
    }
}
