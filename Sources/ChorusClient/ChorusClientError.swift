import ChorusWire
import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A request the service refused or could not do: its HTTP status, its error code and message (and field),
/// and for 429/503 how long to wait.
public struct ChorusClientError: Error, CustomStringConvertible, Sendable, Equatable {
    public var status: Int
    public var code: String
    public var message: String
    public var field: String?
    /// Seconds from `Retry-After`.
    public var retryAfter: Double?

    public init(status: Int, code: String, message: String, field: String? = nil, retryAfter: Double? = nil) {
        self.status = status
        self.code = code
        self.message = message
        self.field = field
        self.retryAfter = retryAfter
    }

    init(response: HTTPURLResponse, body: Data) {
        let detail = (try? JSONDecoder().decode(ErrorBody.self, from: body))?.error
        self.init(
            status: response.statusCode, code: detail?.code ?? "http_\(response.statusCode)",
            message: detail?.message ?? HTTPURLResponse.localizedString(forStatusCode: response.statusCode), field: detail?.field,
            retryAfter: (response.value(forHTTPHeaderField: "Retry-After")).flatMap(Double.init))
    }

    public var description: String { "\(status) \(code): \(message)" + (field.map { " (\($0))" } ?? "") }
}

/// Waveform peaks as the service sends them (audiowaveform's JSON format, version 2).
public struct WaveformData: Codable, Sendable, Equatable {
    public var version: Int
    public var channels: Int
    public var sampleRate: Int
    public var samplesPerPixel: Int
    public var bits: Int
    public var length: Int
    /// `min, max` pairs, `length` of them per channel.
    public var data: [Int]

    enum CodingKeys: String, CodingKey {
        case version, channels
        case sampleRate = "sample_rate"
        case samplesPerPixel = "samples_per_pixel"
        case bits, length, data
    }
}
