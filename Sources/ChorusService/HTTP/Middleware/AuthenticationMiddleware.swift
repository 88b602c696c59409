import ChorusOutbound
import ChorusSupport
import ChorusWire
import Crypto
import Foundation
import Hummingbird

/// `Authorization: Bearer KEY` on every `/v1` route — or a signed link (`?exp=…&sig=…`, see `URLSigner`)
/// for the path it was made for, or, on the player route only, `?key=KEY` (answered with a redirect to a
/// signed link, so the key leaves the address bar). Keys are compared as SHA-256 digests in constant time,
/// so neither their content nor their length leaks through timing; only a digest prefix identifies the
/// caller in limits and logs.
struct AuthenticationMiddleware: RouterMiddleware {
    typealias Context = ChorusRequestContext
    private let digests: [[UInt8]]
    private let signer: URLSigner
    /// Header values already proven to be keys (at most one entry per configured key, and per spelling of it), so
    /// a client's next requests skip the hash; anything else still takes the constant-time comparison.
    private let proven = ProvenKeys()

    init(keys: [String], signer: URLSigner) {
        digests = keys.map { Array(SHA256.hash(data: Data($0.utf8))) }
        self.signer = signer
    }

    /// The caller id of requests made through a signed link: one per render, so the listeners of one
    /// render share a rate limit and never use up a key's.
    static func signedCaller(path: String) -> String {
        let parts = path.split(separator: "/", maxSplits: 4)
        return "link-" + (parts.count > 2 ? String(parts[2].prefix(12)) : "")
    }

    /// The caller a key belongs to, if any.
    private func caller(forKey key: String) -> Caller? {
        if let known = proven[key] { return known }
        let presented = Array(SHA256.hash(data: Data(key.trimmingCharacters(in: .whitespaces).utf8)))
        var match: [UInt8]?
        for digest in digests where Self.constantTimeEqual(digest, presented) { match = digest }
        guard let match else { return nil }
        let caller = Caller(id: Self.callerID(forDigest: match))
        proven.add(key, caller, limit: 4 * digests.count)
        return caller
    }

    static func callerID(forDigest digest: [UInt8]) -> String {
        "key-" + Hex.string(digest.prefix(6))
    }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var context = context
        let query = request.uri.queryParameters
        context.caller = try authenticate(method: request.method, path: request.uri.path, authorization: request.headers[.authorization]) {
            query[$0[...]].map(String.init)
        }
        return try await next(request, context)
    }

    /// Who sends a request with this method, path, `Authorization` header and query (`query(name)` gives a
    /// parameter's decoded value); the one decision for the router and the audio fast path.
    /// - Throws: `ServiceError` 401 when no key, signed link or player key admits the request.
    func authenticate(method: HTTPRequest.Method, path: String, authorization: String?, query: (String) -> String?) throws -> Caller {
        if digests.isEmpty { return Caller(id: "anonymous") }
        if let header = authorization {
            guard header.count > 7, header.prefix(7).lowercased() == "bearer ", let caller = caller(forKey: String(header.dropFirst(7))) else {
                throw ServiceError.unauthorized
            }
            return caller
        }
        if let signature = query("sig") {
            guard method == .get || method == .head, signer.verify(path: path, expires: query("exp"), signature: signature) else {
                throw ServiceError(.unauthorized, .unauthorized, "the link's signature is missing, wrong or expired")
            }
            return Caller(id: Self.signedCaller(path: path))
        }
        if path.hasSuffix("/player"), let key = query("key"), let caller = caller(forKey: key) { return caller }
        throw ServiceError.unauthorized
    }

    /// Compares every byte whatever the first difference.
    static func constantTimeEqual(_ left: [UInt8], _ right: [UInt8]) -> Bool {
        guard left.count == right.count else { return false }
        var difference: UInt8 = 0
        for index in left.indices { difference |= left[index] ^ right[index] }
        return difference == 0
    }
}

/// Keys seen to be valid, by the exact text presented (bounded: only valid keys get in, a few spellings each).
final class ProvenKeys: Sendable {
    private let callers = Locked<[String: Caller]>([:])

    subscript(key: String) -> Caller? { callers.withLock { $0[key] } }

    func add(_ key: String, _ caller: Caller, limit: Int) {
        callers.withLock { if $0.count < limit { $0[key] = caller } }
    }
}
