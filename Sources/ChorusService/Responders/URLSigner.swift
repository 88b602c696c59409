import ChorusOutbound
import ChorusSupport
import Crypto
import Foundation

/// Signed links: `?exp=UNIX&sig=HEX`, an HMAC-SHA256 of the path and the expiry with the service's secret,
/// so a page can load its audio, peaks and timeline without the API key ever appearing in it. A link works
/// until it expires, as often as needed, for that path only.
struct URLSigner: Sendable {
    static let lifetime: Double = 3_600
    private let secret: Data

    init(secret: Data) { self.secret = secret }

    func signature(path: String, expires: Int) -> String {
        Hex.string(HMAC<SHA256>.authenticationCode(for: Data("\(path)\n\(expires)".utf8), using: SymmetricKey(data: secret)))
    }

    /// `path?exp=…&sig=…` (with `query`, unsigned, in front of them).
    func sign(_ path: String, query: String = "", now: Double = Date().timeIntervalSince1970) -> String {
        let expires = Int(now + Self.lifetime)
        return path + "?" + (query.isEmpty ? "" : query + "&") + "exp=\(expires)&sig=\(signature(path: path, expires: expires))"
    }

    /// True when `signature` is this path's, made by this service, and `expires` is still ahead.
    func verify(path: String, expires: String?, signature: String?, now: Double = Date().timeIntervalSince1970) -> Bool {
        guard let expires, let time = Int(expires), Double(time) > now, let signature else { return false }
        let expected = Array(self.signature(path: path, expires: time).utf8)
        return AuthenticationMiddleware.constantTimeEqual(expected, Array(signature.utf8))
    }

    /// The secret in `<data>/signing.key` (made once, readable by the owner only), so links survive restarts
    /// and work on every instance sharing the folder.
    static func secret(in directory: URL) throws -> Data {
        let file = directory.appendingPathComponent("signing.key")
        if let existing = try? Data(contentsOf: file), existing.count >= 32 { return existing }
        var generator = SystemRandomNumberGenerator()
        var secret = Data()
        while secret.count < 32 { withUnsafeBytes(of: generator.next()) { secret.append(contentsOf: $0) } }
        try DataDirectory.write(secret, to: file)
        chmod(file.path, 0o600)
        return secret
    }
}
