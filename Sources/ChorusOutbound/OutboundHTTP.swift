package import AsyncHTTPClient
package import Foundation
package import NIOCore
import NIOFoundationCompat
package import NIOHTTP1

/// The process's one outbound HTTP client, on AsyncHTTPClient's shared event loops: voice providers and
/// object storage share its connection pools. Connection establishment is not retried inside the client: a
/// refused or unreachable server fails the attempt at once and the caller's retry policy decides (backoff,
/// attempts, total time) — otherwise each attempt would wait out the connect timeout, and a server that is down
/// would hold a render for minutes before its error. A response that stops arriving for a minute (its head or any
/// part of its body) fails too: a request's own deadline covers only the wait for the head.
///
/// Every call goes through `send(_:timeoutSeconds:maxBytes:secrets:)`: a deadline, a cap on the answer's size, and
/// a failure said in one `OutboundFailure`, which each caller maps to its own error (`VoiceError`, `S3Error`).
///
/// ```swift
/// var request = HTTPClientRequest(url: "https://api.example.com/v1/speech")
/// request.method = .POST
/// let response = try await OutboundHTTP.send(request, timeoutSeconds: 120, maxBytes: 100 << 20, secrets: [key])
/// print(response.status, response.body.readableBytes, response.retryAfter ?? 0)
/// ```
package enum OutboundHTTP {
    package static let client: HTTPClient = {
        var configuration = HTTPClient.Configuration()
        configuration.connectionPool.retryConnectionEstablishment = false
        configuration.timeout.connect = .seconds(5)
        configuration.timeout.read = .seconds(60)
        return HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: configuration)
    }()

    /// `request` sent by the one client, its answer read whole (unless `readBody` is false: a `HEAD`).
    /// - Parameters:
    ///   - timeoutSeconds: how long the answer's head may take.
    ///   - maxBytes: the most of a body that is read; a longer one is `OutboundFailure.tooLarge`.
    ///   - secrets: what never appears in a failure's words (keys, credentials).
    /// - Throws: `OutboundFailure` (`CancellationError` when the calling task is cancelled).
    package static func send(
        _ request: HTTPClientRequest, timeoutSeconds: Int64, maxBytes: Int, secrets: [String], readBody: Bool = true
    ) async throws -> OutboundResponse {
        do {
            let response = try await client.execute(request, timeout: .seconds(timeoutSeconds))
            let body = readBody ? try await response.body.collect(upTo: maxBytes) : ByteBuffer()
            return OutboundResponse(status: Int(response.status.code), headers: response.headers, body: body)
        } catch is NIOTooManyBytesError {
            throw OutboundFailure.tooLarge(limit: maxBytes)
        } catch let error as HTTPClientError {
            switch error {
            case .deadlineExceeded, .readTimeout, .connectTimeout, .writeTimeout:
                throw OutboundFailure.timedOut(seconds: timeoutSeconds)
            default:
                throw OutboundFailure.unreachable(
                    ConnectionFailure.describe(error, origin: ConnectionFailure.origin(of: request.url), secrets: secrets))
            }
        } catch is CancellationError {
            throw CancellationError()
        } catch {
            throw OutboundFailure.unreachable(ConnectionFailure.describe(error, origin: ConnectionFailure.origin(of: request.url), secrets: secrets))
        }
    }
}

/// Why an outbound call got no usable answer; the caller says it in its own error type.
package enum OutboundFailure: Error, Sendable, Equatable {
    /// The body was longer than the cap.
    case tooLarge(limit: Int)
    /// No answer within the deadline.
    case timedOut(seconds: Int64)
    /// The connection failed or dropped: `cannot reach https://host:443 (connection refused)` (`ConnectionFailure`).
    case unreachable(String)
}

/// An answer: its status, headers and body.
package struct OutboundResponse: Sendable {
    package var status: Int
    package var headers: HTTPHeaders
    package var body: ByteBuffer

    package init(status: Int, headers: HTTPHeaders, body: ByteBuffer) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// The body's bytes.
    package var data: Data { Data(buffer: body) }

    /// Seconds the server asked the caller to wait (`retryAfter(in:)`).
    package var retryAfter: Double? { Self.retryAfter(in: headers) }

    /// Seconds `headers` ask a caller to wait: `retry-after-ms`, else `Retry-After` (seconds or an HTTP date).
    package static func retryAfter(in headers: HTTPHeaders) -> Double? {
        if let milliseconds = headers.first(name: "retry-after-ms").flatMap(Double.init) { return milliseconds / 1000 }
        guard let value = headers.first(name: "retry-after")?.trimmingCharacters(in: .whitespaces) else { return nil }
        if let seconds = Double(value) { return max(0, seconds) }
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss zzz"
        return formatter.date(from: value).map { max(0, $0.timeIntervalSinceNow) }
    }
}
