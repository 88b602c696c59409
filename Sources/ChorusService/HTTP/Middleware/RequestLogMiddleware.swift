import ChorusOutbound
import ChorusSupport
import ChorusWire
import Foundation
import HTTPTypes
import Hummingbird
import Logging

/// Gives every request an id (`X-Request-Id`, and in the log), turns any error into the service's JSON
/// error body (`ServiceError.answering`), counts it (`RequestMetrics`) and writes one log line per request: method, path (secrets in the query removed),
/// status, duration and caller.
struct RequestLogMiddleware: RouterMiddleware {
    typealias Context = ChorusRequestContext
    let logger: Logger
    let metrics: RequestMetrics
    /// The routes, to tell an unknown path (404) from a known path with another method (405).
    let routes: RouteTable

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var context = context
        context.requestID = Self.newID()
        let started = Date()
        var response: Response
        var failure: String?
        do {
            response = try await next(request, context)
        } catch {
            let standard = ServiceError.answering(error, method: request.method, path: request.uri.path, routes: routes)
            response = try standard.response(from: request, context: context)
            failure = standard.body.error.code
            switch error {
            case let storage as StorageError:
                logger.error("shared storage failed", metadata: ["request_id": .string(context.requestID), "error": .string(storage.description)])
            case let database as DatabaseError:
                logger.error("database failed", metadata: ["request_id": .string(context.requestID), "error": .string(database.description)])
            case is any HTTPResponseError:
                break
            default:
                // The service's own files unwritable (507), or anything else unexpected (500).
                logger.error(
                    standard.status.code == 507 ? "storage failure" : "unhandled error",
                    metadata: ["request_id": .string(context.requestID), "error": .string(String(describing: error))])
            }
        }
        response.headers[Self.requestIDField] = context.requestID
        Self.record(
            logger: logger, metrics: metrics, requestID: context.requestID, method: request.method.rawValue, route: context.endpointPath,
            path: request.uri.path, query: request.uri.query, status: response.status.code, elapsed: Date().timeIntervalSince(started),
            caller: context.caller, failure: failure)
        return response
    }

    static let requestIDField = HTTPField.Name("X-Request-Id")!

    /// Counts a request and writes its log line (the router's requests and the audio fast path's alike).
    static func record(
        logger: Logger, metrics: RequestMetrics, requestID: String, method: String, route: String?, path: String, query: String?,
        status: Int, elapsed: Double, caller: Caller?, failure: String?
    ) {
        metrics.record(method: method, route: route ?? "unmatched", status: status, seconds: elapsed)
        var metadata: Logger.Metadata = [
            "request_id": .string(requestID), "method": .string(method), "path": .string(loggable(path: path, query: query)),
            "status": .stringConvertible(status), "ms": .stringConvertible(Int(elapsed * 1000)),
        ]
        if let caller { metadata["caller"] = .string(caller.id) }
        if let failure { metadata["error"] = .string(failure) }
        logger.info("request", metadata: metadata)
    }

    /// The path with the values of `key`, `sig` and `token` query parameters removed.
    static func loggable(path: String, query: String?) -> String {
        guard let query, !query.isEmpty else { return path }
        let parts = query.split(separator: "&").map { part -> String in
            let name = part.split(separator: "=", maxSplits: 1).first.map(String.init) ?? ""
            return ["key", "sig", "token", "api_key"].contains(name.lowercased()) ? "\(name)=[redacted]" : String(part)
        }
        return path + "?" + parts.joined(separator: "&")
    }

    /// A request id: 16 hex digits, unique within the process (a counter from a random start through a bijective
    /// 64-bit mix, so ids from different runs do not collide and do not look sequential; they tie a log line to a
    /// response, and are no secret — the mix can be inverted). No system call: the kernel's random bytes cost a
    /// `getrandom` per request, measurable on the audio fast path.
    static func newID() -> String {
        let count = requestCounter.withLock { value -> UInt64 in
            value &+= 1
            return value
        }
        var mixed = count &+ requestKey
        mixed = (mixed ^ (mixed >> 30)) &* 0xbf58_476d_1ce4_e5b9
        mixed = (mixed ^ (mixed >> 27)) &* 0x94d0_49bb_1331_11eb
        mixed ^= mixed >> 31
        return withUnsafeBytes(of: mixed.bigEndian) { Hex.string($0) }
    }

    /// A lock rather than `Synchronization.Atomic`, which needs macOS 15 (the package supports 14).
    private static let requestCounter = Locked<UInt64>(0)
    private static let requestKey = UInt64.random(in: .min ... .max)
}
