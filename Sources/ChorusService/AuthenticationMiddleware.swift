import Crypto
import Foundation
import Hummingbird

/// `Authorization: Bearer KEY` on every `/v1` route. Keys are compared as SHA-256 digests in constant
/// time, so neither their content nor their length leaks through timing; only a digest prefix
/// identifies the caller in limits and logs.
struct AuthenticationMiddleware: RouterMiddleware {
    typealias Context = ChorusRequestContext
    private let digests: [[UInt8]]

    init(keys: [String]) {
        digests = keys.map { Array(SHA256.hash(data: Data($0.utf8))) }
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
        guard let header = request.headers[.authorization], header.count > 7, header.prefix(7).lowercased() == "bearer " else {
            throw ServiceError.unauthorized
        }
        let presented = Array(SHA256.hash(data: Data(header.dropFirst(7).trimmingCharacters(in: .whitespaces).utf8)))
        var match: [UInt8]?
        for digest in digests where Self.constantTimeEqual(digest, presented) { match = digest }
        guard let match else { throw ServiceError.unauthorized }
        context.caller = Caller(id: Self.callerID(forDigest: match))
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
