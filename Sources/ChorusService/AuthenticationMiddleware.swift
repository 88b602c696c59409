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
        let presented = Array(SHA256.hash(data: Data(key.trimmingCharacters(in: .whitespaces).utf8)))
        var match: [UInt8]?
        for digest in digests where Self.constantTimeEqual(digest, presented) { match = digest }
        return match.map { Caller(id: Self.callerID(forDigest: $0)) }
    }

    static func callerID(forDigest digest: [UInt8]) -> String {
        "key-" + Hex.string(digest.prefix(6))
    }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var context = context
        if digests.isEmpty {
            context.caller = Caller(id: "anonymous")
            return try await next(request, context)
        }
        if let header = request.headers[.authorization] {
            guard header.count > 7, header.prefix(7).lowercased() == "bearer ", let caller = caller(forKey: String(header.dropFirst(7))) else {
                throw ServiceError.unauthorized
            }
            context.caller = caller
        } else if request.uri.queryParameters["sig"] != nil {
            let query = request.uri.queryParameters
            guard request.method == .get || request.method == .head,
                  signer.verify(path: request.uri.path, expires: query["exp"].map(String.init), signature: query["sig"].map(String.init)) else {
                throw ServiceError(.unauthorized, "unauthorized", "the link's signature is missing, wrong or expired")
            }
            context.caller = Caller(id: Self.signedCaller(path: request.uri.path))
        } else if request.uri.path.hasSuffix("/player"), let key = request.uri.queryParameters["key"], let caller = caller(forKey: String(key)) {
            context.caller = caller
        } else {
            throw ServiceError.unauthorized
        }
        return try await next(request, context)
    }

    /// Compares every byte whatever the first difference.
    static func constantTimeEqual(_ left: [UInt8], _ right: [UInt8]) -> Bool {
        guard left.count == right.count else { return false }
        var difference: UInt8 = 0
        for index in left.indices { difference |= left[index] ^ right[index] }
        return difference == 0
    }
}
