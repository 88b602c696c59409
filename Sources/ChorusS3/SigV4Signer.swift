import ChorusOutbound
import ChorusSupport
import Crypto
import Foundation

/// AWS Signature Version 4 (`AWS4-HMAC-SHA256`) for S3-compatible storage: signed request headers and
/// presigned URLs. Paths are encoded once, the way S3 wants them (no normalization, no double encoding);
/// the whole algorithm is checked against AWS's published examples in `SigV4Tests`.
///
/// ```swift
/// let signer = SigV4Signer(credentials: credentials, region: "us-east-1")
/// let headers = signer.sign(method: "GET", host: "bucket.s3.amazonaws.com", path: "/key",
///                           headers: [("x-amz-content-sha256", SigV4Signer.emptyPayloadHash)],
///                           payloadHash: SigV4Signer.emptyPayloadHash, date: Date())
/// ```
struct SigV4Signer: Sendable {
    let credentials: S3Credentials
    let region: String
    var service = "s3"

    /// SHA-256 of no bytes, the payload hash of a request without a body.
    static let emptyPayloadHash = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
    static let unsignedPayload = "UNSIGNED-PAYLOAD"

    /// The headers to send with a request: `x-amz-date`, the session token if any, and `Authorization`.
    /// - Parameters:
    ///   - path: the request path as it is sent, already encoded (`SigV4Signer.encodePath`).
    ///   - query: names and values, not encoded.
    ///   - headers: every other header that is to be signed (e.g. `x-amz-content-sha256`, `range`); `host`
    ///     is added here.
    func sign(
        method: String, host: String, path: String, query: [(String, String)] = [], headers: [(String, String)],
        payloadHash: String, date: Date
    ) -> [(String, String)] {
        let (amzDate, day) = Self.stamps(date)
        var added = [("x-amz-date", amzDate)]
        if let token = credentials.sessionToken { added.append(("x-amz-security-token", token)) }
        let all = [("host", host)] + headers + added
        let canonical = Self.canonicalHeaders(all)
        let request = [method, path, Self.canonicalQuery(query), canonical.text, canonical.names, payloadHash].joined(separator: "\n")
        let scope = "\(day)/\(region)/\(service)/aws4_request"
        let signature = signature(of: request, amzDate: amzDate, day: day, scope: scope)
        let authorization =
            "AWS4-HMAC-SHA256 Credential=\(credentials.accessKeyID)/\(scope), SignedHeaders=\(canonical.names), Signature=\(signature)"
        return added + [("Authorization", authorization)]
    }

    /// The query of a presigned URL for `method` on `path` (encoded), valid for `expires` seconds
    /// (1 s to 7 days), signing the `host` header only and an unsigned payload.
    func presignedQuery(method: String, host: String, path: String, query: [(String, String)] = [], expires: Int, date: Date) -> String {
        let (amzDate, day) = Self.stamps(date)
        let scope = "\(day)/\(region)/\(service)/aws4_request"
        var items =
            query + [
                ("X-Amz-Algorithm", "AWS4-HMAC-SHA256"), ("X-Amz-Credential", "\(credentials.accessKeyID)/\(scope)"),
                ("X-Amz-Date", amzDate), ("X-Amz-Expires", String(min(max(expires, 1), 604_800))), ("X-Amz-SignedHeaders", "host"),
            ]
        if let token = credentials.sessionToken { items.append(("X-Amz-Security-Token", token)) }
        let canonicalQuery = Self.canonicalQuery(items)
        let request = [method, path, canonicalQuery, "host:\(host)\n", "host", Self.unsignedPayload].joined(separator: "\n")
        return canonicalQuery + "&X-Amz-Signature=" + signature(of: request, amzDate: amzDate, day: day, scope: scope)
    }

    private func signature(of canonicalRequest: String, amzDate: String, day: String, scope: String) -> String {
        let stringToSign = ["AWS4-HMAC-SHA256", amzDate, scope, Hex.string(SHA256.hash(data: Data(canonicalRequest.utf8)))].joined(separator: "\n")
        var key = SymmetricKey(data: Data("AWS4\(credentials.secretAccessKey)".utf8))
        for part in [day, region, service, "aws4_request"] {
            key = SymmetricKey(data: Data(HMAC<SHA256>.authenticationCode(for: Data(part.utf8), using: key)))
        }
        return Hex.string(HMAC<SHA256>.authenticationCode(for: Data(stringToSign.utf8), using: key))
    }

    /// `20130524T000000Z` and `20130524`, in UTC.
    static func stamps(_ date: Date) -> (String, String) { DateText.amz(date.timeIntervalSince1970) }

    /// Lowercase names, values trimmed with inner runs of spaces collapsed, sorted by name; repeated names joined by commas.
    static func canonicalHeaders(_ headers: [(String, String)]) -> (text: String, names: String) {
        var merged: [String: String] = [:]
        for (name, value) in headers {
            let trimmed = value.split(separator: " ", omittingEmptySubsequences: true).joined(separator: " ")
            let key = name.lowercased()
            merged[key] = merged[key].map { "\($0),\(trimmed)" } ?? trimmed
        }
        let names = merged.keys.sorted()
        return (names.map { "\($0):\(merged[$0]!)\n" }.joined(), names.joined(separator: ";"))
    }

    /// Names and values encoded (`/` included), sorted by name then value, `name=value` joined by `&`.
    static func canonicalQuery(_ items: [(String, String)]) -> String {
        // Encoded text is ASCII: String order is byte order.
        let encoded: [(name: String, value: String)] = items.map { (encode($0.0, slash: true), encode($0.1, slash: true)) }
        let sorted = encoded.sorted { a, b in a.name == b.name ? a.value < b.value : a.name < b.name }
        return sorted.map { "\($0.name)=\($0.value)" }.joined(separator: "&")
    }

    /// An object key as a request path: `/` + the key with every byte but the unreserved ones and `/` percent-encoded.
    static func encodePath(_ key: String) -> String { "/" + encode(key, slash: false) }

    private static let unreserved: [Bool] = (0..<256).map { byte in
        let character = Character(Unicode.Scalar(UInt8(byte)))
        return (byte < 128 && (character.isLetter || character.isNumber)) || "-._~".contains(character)
    }

    /// RFC 3986 encoding as SigV4 defines it: `A-Z a-z 0-9 - . _ ~` kept, every other byte `%XX` (uppercase).
    static func encode(_ text: String, slash: Bool) -> String {
        let digits = Array("0123456789ABCDEF".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(text.utf8.count)
        for byte in text.utf8 {
            if unreserved[Int(byte)] || (byte == 0x2F && !slash) {
                out.append(byte)
            } else {
                out.append(0x25)
                out.append(digits[Int(byte >> 4)])
                out.append(digits[Int(byte & 0x0f)])
            }
        }
        return String(decoding: out, as: UTF8.self)
    }
}
