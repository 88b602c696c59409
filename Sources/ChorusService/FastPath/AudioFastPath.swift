import ChorusOutbound
import ChorusSupport
import ChorusWire
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import NIOHTTP1
import NIOHTTPTypes
import NIOHTTPTypesHTTP1

/// `GET`/`HEAD /v1/renders/{id}/audio` answered on the event loop, in a channel handler before Hummingbird's
/// async request machinery: a player seeking in a file sends many small range requests, and that machinery (task
/// switches, async sequences) was most of each one's cost. The bytes go from the file to the socket by
/// `sendfile` (a `FileRegion`), as nginx sends them. Only the plain case is taken: a finished render whose audio
/// is in this instance's data folder, a key or signed link that authenticates, a token in the caller's bucket.
/// The decisions are the router's own (`AuthenticationMiddleware.authenticate`, `RateLimiter`,
/// `FileResponder.plan`, `RequestLogMiddleware.record`); anything else — an error to explain, a render elsewhere
/// or still running, a redirect — is passed on to the router untouched.
struct AudioFastPath: Sendable {
    /// What follows the head of an answer.
    enum Body {
        /// Bytes of an open file (closed once they are written, or when the connection goes first).
        case file(NIOFileHandle, ClosedRange<Int>)
    }

    let state: ServiceState
    let authenticator: AuthenticationMiddleware
    let limiter: RateLimiter

    static let route = ServicePaths.render("{id}", .audio)
    /// `Date`, as Hummingbird sends it, formatted once a second.
    private static let date = SecondText(DateText.http)
    private static let prefix = Array((ServicePaths.renders + "/").utf8), suffix = Array(("/" + ServicePaths.RenderPart.audio.rawValue).utf8)

    /// The response to `request`, or `nil` to leave it to the router.
    func answer(_ request: HTTPRequest, started: Double) -> (HTTPResponse, Body?)? {
        guard request.method == .get || request.method == .head, let target = request.path else { return nil }
        let (path, query) = Self.split(target)
        guard let id = Self.renderID(path), let stored = state.renders.get(id), stored.isDone else { return nil }
        var items: [String: String] = [:]
        if let query {
            for item in query.split(separator: "&") {
                let pair = item.split(separator: "=", maxSplits: 1)
                // Only a signed link's own parameters (hex and digits, nothing to decode); anything else goes the long way.
                guard pair.count == 2, pair[0] == "exp" || pair[0] == "sig", Hex.isLowercase(pair[1]) else { return nil }
                items[String(pair[0])] = String(pair[1])
            }
        }
        guard
            let caller = try? authenticator.authenticate(
                method: request.method, path: path, authorization: request.headerFields[.authorization],
                query: { items[$0] })
        else { return nil }
        if let shared = state.shared, shared.redirectAudio { return nil }
        // A limit counted in the database takes a round trip: the router's middleware does it.
        if state.deployment.shared != nil && limiter.perMinute > 0 { return nil }
        let plan = state.files.plan(
            method: request.method, requestHeaders: request.headerFields, size: stored.audioBytes,
            contentType: stored.audioContentType,
            etag: stored.etag, modified: Date(timeIntervalSince1970: stored.createdAt))
        var body: Body?
        if let bytes = plan.bytes {
            // Opening a stored file is a metadata lookup, not audio work; one descriptor per answer, owned by it.
            guard let path = state.catalog.audioPath(stored), let handle = try? NIOFileHandle(_deprecatedPath: path) else { return nil }
            var info = stat()
            guard (try? handle.withUnsafeFileDescriptor { fstat($0, &info) }) == 0, Int(info.st_size) == stored.audioBytes else {
                try? handle.close()
                return nil
            }
            body = .file(handle, bytes)
        }
        // Last, so that a request passed on is not counted twice.
        if limiter.perMinute > 0, limiter.take(for: caller.id) != nil {
            if case .file(let handle, _) = body { try? handle.close() }
            return nil
        }
        let requestID = RequestLogMiddleware.newID()
        var headers = plan.headers
        headers[RequestLogMiddleware.requestIDField] = requestID
        if request.headerFields[.connection]?.lowercased() == "close" { headers[.connection] = "close" }
        headers[.date] = Self.date.now()
        headers[.server] = "chorus"
        RequestLogMiddleware.record(
            logger: state.logger, metrics: state.metrics.requests, requestID: requestID, method: request.method.rawValue,
            route: Self.route, path: path, query: query.map(String.init), status: plan.status.code,
            elapsed: Date().timeIntervalSince1970 - started, caller: caller, failure: nil)
        return (HTTPResponse(status: plan.status, headerFields: headers), body)
    }

    static func split(_ target: String) -> (path: String, query: Substring?) {
        // By bytes: `String.firstIndex(of: Character)` walks grapheme clusters, a measurable cost per request.
        guard let mark = target.utf8.firstIndex(of: UInt8(ascii: "?")) else { return (target, nil) }
        return (String(target[..<mark]), target[target.utf8.index(after: mark)...])
    }

    /// The id in `/v1/renders/<id>/audio`, if the path is exactly that.
    static func renderID(_ path: String) -> String? {
        let bytes = path.utf8
        guard bytes.count == prefix.count + RenderIdentity.length + suffix.count, bytes.starts(with: prefix),
            bytes.reversed().starts(with: suffix.reversed())
        else {
            return nil
        }
        let start = path.utf8.index(path.utf8.startIndex, offsetBy: prefix.count)
        let end = path.utf8.index(start, offsetBy: RenderIdentity.length)
        return DataDirectory.validID(String(path[start..<end]), length: RenderIdentity.length)
    }

}
