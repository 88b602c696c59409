import AsyncHTTPClient
import ChorusOutbound
import ChorusWire
import Foundation
import NIOCore
import NIOFoundationCompat
import NIOHTTP1

/// A provider's HTTP plumbing: one shared client, a timeout on every call, a cap on response size,
/// transport failures turned into `VoiceError`s, and secrets kept out of every message.
struct ProviderHTTP: Sendable {
    struct Response: Sendable {
        var status: Int
        var headers: HTTPHeaders
        var body: Data

        /// Seconds from `retry-after-ms` or `Retry-After` (seconds or an HTTP date).
        var retryAfter: Double? {
            if let milliseconds = headers.first(name: "retry-after-ms").flatMap(Double.init) { return milliseconds / 1000 }
            guard let value = headers.first(name: "retry-after")?.trimmingCharacters(in: .whitespaces) else { return nil }
            if let seconds = Double(value) { return max(0, seconds) }
            let formatter = DateFormatter()
            formatter.locale = Locale(identifier: "en_US_POSIX")
            formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss zzz"
            return formatter.date(from: value).map { max(0, $0.timeIntervalSinceNow) }
        }

        var text: String { String(decoding: body.prefix(4_000), as: UTF8.self) }

        /// The declared type when it is certainly not audio (`text/…`, JSON, XML, HTML): a proxy's error page or
        /// a maintenance notice answered with 200. Audio types themselves are not checked (providers do not
        /// document them for raw formats; the requested format decides the decoder).
        var nonAudioContentType: String? {
            guard let type = headers.first(name: "content-type")?.lowercased() else { return nil }
            return ["text/", "json", "xml", "html"].contains { type.contains($0) } ? type : nil
        }
    }

    /// The one HTTP client (`OutboundHTTP`).
    static var client: HTTPClient { OutboundHTTP.client }

    let provider: String
    var timeoutSeconds = BuiltInProvider.timeoutSeconds
    var maxResponseBytes = 100 * 1024 * 1024
    let secrets: [String]

    func send(_ method: HTTPMethod, _ url: String, headers: [(String, String)], json: Data? = nil) async throws -> Response {
        try await send(method, url, headers: headers, body: json, contentType: json == nil ? nil : "application/json")
    }

    func send(_ method: HTTPMethod, _ url: String, headers: [(String, String)], body: Data?, contentType: String?) async throws -> Response {
        var request = HTTPClientRequest(url: url)
        request.method = method
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        request.headers.add(name: "User-Agent", value: ChorusVersion.userAgent)
        if let body {
            if let contentType { request.headers.add(name: "Content-Type", value: contentType) }
            request.body = .bytes(ByteBuffer(data: body))
        }
        do {
            let response = try await Self.client.execute(request, timeout: .seconds(timeoutSeconds))
            let body = try await response.body.collect(upTo: maxResponseBytes)
            return Response(status: Int(response.status.code), headers: response.headers, body: Data(buffer: body))
        } catch let error as NIOTooManyBytesError {
            _ = error
            throw VoiceError(.invalidResponse, provider: provider, message: "the response is larger than \(maxResponseBytes / 1_048_576) MB")
        } catch let error as HTTPClientError {
            switch error {
            case .deadlineExceeded, .readTimeout, .connectTimeout, .writeTimeout:
                throw VoiceError(.timeout, provider: provider, message: "no answer within \(timeoutSeconds) s")
            default:
                throw VoiceError(.network, provider: provider, message: Self.describe(error, url: url, secrets: secrets))
            }
        } catch let error as VoiceError {
            throw error
        } catch {
            throw VoiceError(.network, provider: provider, message: Self.describe(error, url: url, secrets: secrets))
        }
    }

    func redact(_ text: String) -> String { Secrets.redact(text, secrets: secrets) }

    /// "cannot reach http://host:port (connection refused)" rather than NIO's internal wording (`ConnectionFailure`).
    static func describe(_ error: any Error, url: String, secrets: [String]) -> String {
        ConnectionFailure.describe(error, origin: ConnectionFailure.origin(of: url), secrets: secrets)
    }

    /// Joins a base URL and a path that starts with `/v1/…`, whether or not the base already ends in `/v1`.
    static func join(_ base: String, _ path: String) -> String {
        var trimmed = base
        while trimmed.hasSuffix("/") { trimmed.removeLast() }
        if trimmed.hasSuffix("/v1") && path.hasPrefix("/v1/") { trimmed.removeLast(3) }
        return trimmed + path
    }

    /// A response body as a JSON object, or `nil`.
    static func jsonObject(_ data: Data) -> [String: Any]? {
        (try? JSONSerialization.jsonObject(with: data)) as? [String: Any]
    }
}

extension ProviderHTTP: CustomReflectable {
    /// Reflection never shows the secrets it redacts.
    var customMirror: Mirror { Mirror(self, children: ["provider": provider, "timeoutSeconds": timeoutSeconds]) }
}
