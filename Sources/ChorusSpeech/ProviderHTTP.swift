import AsyncHTTPClient
import ChorusOutbound
import ChorusSupport
package import Foundation
import NIOCore
import NIOFoundationCompat
package import NIOHTTP1

/// A provider's HTTP plumbing: one shared client, a timeout on every call, a cap on response size,
/// transport failures turned into `VoiceError`s, and secrets kept out of every message.
package struct ProviderHTTP: Sendable {
    package struct Response: Sendable {
        package var status: Int
        package var headers: HTTPHeaders
        package var body: Data
        /// Seconds the provider asked to wait (`OutboundResponse.retryAfter(in:)`).
        package var retryAfter: Double? { OutboundResponse.retryAfter(in: headers) }

        package var text: String { String(decoding: body.prefix(4_000), as: UTF8.self) }

        /// The declared type when it is certainly not audio (`text/…`, JSON, XML, HTML): a proxy's error page or
        /// a maintenance notice answered with 200. Audio types themselves are not checked (providers do not
        /// document them for raw formats; the requested format decides the decoder).
        package var nonAudioContentType: String? {
            guard let type = headers.first(name: "content-type")?.lowercased() else { return nil }
            return ["text/", "json", "xml", "html"].contains { type.contains($0) } ? type : nil
        }
    }

    package let provider: String
    package var timeoutSeconds = BuiltInProvider.timeoutSeconds
    package var maxResponseBytes = 100 * 1024 * 1024
    package let secrets: [String]

    package func send(_ method: HTTPMethod, _ url: String, headers: [(String, String)], json: Data? = nil) async throws -> Response {
        try await send(method, url, headers: headers, body: json, contentType: json == nil ? nil : "application/json")
    }

    /// One request through the one outbound client (`OutboundHTTP.send`), its failures said as `VoiceError`s.
    package func send(_ method: HTTPMethod, _ url: String, headers: [(String, String)], body: Data?, contentType: String?) async throws -> Response {
        var request = HTTPClientRequest(url: url)
        request.method = method
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        request.headers.add(name: "User-Agent", value: ChorusVersion.userAgent)
        if let body {
            if let contentType { request.headers.add(name: "Content-Type", value: contentType) }
            request.body = .bytes(ByteBuffer(data: body))
        }
        do {
            let response = try await OutboundHTTP.send(request, timeoutSeconds: timeoutSeconds, maxBytes: maxResponseBytes, secrets: secrets)
            return Response(status: response.status, headers: response.headers, body: response.data)
        } catch let failure as OutboundFailure {
            switch failure {
            case .tooLarge(let limit):
                throw VoiceError(.invalidResponse, provider: provider, message: "the response is larger than \(limit / 1_048_576) MB")
            case .timedOut(let seconds):
                throw VoiceError(.timeout, provider: provider, message: "no answer within \(seconds) s")
            case .unreachable(let reason):
                throw VoiceError(.network, provider: provider, message: reason)
            }
        }
    }

    package func redact(_ text: String) -> String { Secrets.redact(text, secrets: secrets) }

    /// Joins a base URL and a path that starts with `/v1/…`, whether or not the base already ends in `/v1`.
    package static func join(_ base: String, _ path: String) -> String {
        var trimmed = base
        while trimmed.hasSuffix("/") { trimmed.removeLast() }
        if trimmed.hasSuffix("/v1") && path.hasPrefix("/v1/") { trimmed.removeLast(3) }
        return trimmed + path
    }

    /// A response body as a JSON object, or `nil`.
    package static func jsonObject(_ data: Data) -> [String: Any]? {
        (try? JSONSerialization.jsonObject(with: data)) as? [String: Any]
    }
}

extension ProviderHTTP: CustomReflectable {
    /// Reflection never shows the secrets it redacts.
    package var customMirror: Mirror { Mirror(self, children: ["provider": provider, "timeoutSeconds": timeoutSeconds]) }
}
