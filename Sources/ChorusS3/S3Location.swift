import Foundation

/// An access key pair; the secret and the session token never appear in a description, a log or an error.
package struct S3Credentials: Sendable, CustomStringConvertible, CustomReflectable {
    let accessKeyID: String
    let secretAccessKey: String
    var sessionToken: String?

    package var description: String { "S3Credentials(\(accessKeyID), secret redacted)" }
    package var customMirror: Mirror { Mirror(self, children: ["accessKeyID": accessKeyID]) }
    /// What `Secrets.redact`-style scrubbing must remove from any text that could have seen a request.
    package var secrets: [String] { [secretAccessKey] + (sessionToken.map { [$0] } ?? []) }
}

/// Where blobs go in an S3-compatible bucket, configured the way AWS's own SDKs are: `--storage
/// s3://bucket/prefix`, and `AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY` (`AWS_SESSION_TOKEN`), `AWS_REGION`
/// (`AWS_DEFAULT_REGION`, else `us-east-1`), `AWS_ENDPOINT_URL_S3` or `AWS_ENDPOINT_URL` for a non-AWS endpoint.
/// With an endpoint, requests use path-style addressing (`endpoint/bucket/key`: Supabase Storage, MinIO, R2 and
/// local servers need it); without, AWS's virtual-hosted style (`bucket.s3.region.amazonaws.com/key`).
package struct S3Location: Sendable, CustomStringConvertible {
    /// `https://host[:port]` (no path).
    package let origin: String
    /// The endpoint's own path, before `/bucket/key` (Supabase Storage: `/storage/v1/s3`); empty for most.
    package let basePath: String
    /// The `Host` header (with a port unless it is the scheme's default).
    package let host: String
    package let bucket: String
    /// Key prefix without a trailing `/`; empty for the bucket's root.
    package let prefix: String
    package let region: String
    package let pathStyle: Bool
    package let credentials: S3Credentials

    /// - Throws: `S3LocationError` naming the URL (`setting` is `nil`) or the environment variable that is unusable.
    package init(url: String, environment: [String: String]) throws {
        guard url.hasPrefix("s3://") else { throw S3LocationError(setting: nil, value: url, reason: "is not an s3://bucket/prefix URL") }
        let rest = url.dropFirst(5)
        let bucket = String(rest.prefix { $0 != "/" })
        // S3's bucket naming rules: 3–63 characters, lowercase letters, digits, dots and hyphens.
        guard (3...63).contains(bucket.count),
            bucket.allSatisfy({ ($0.isASCII && ($0.isLowercase || $0.isNumber)) || $0 == "." || $0 == "-" })
        else {
            throw S3LocationError(setting: nil, value: url, reason: "names no valid bucket (3–63 lowercase letters, digits, dots, hyphens)")
        }
        var prefix = String(rest.dropFirst(bucket.count))
        while prefix.hasPrefix("/") { prefix.removeFirst() }
        while prefix.hasSuffix("/") { prefix.removeLast() }
        guard !prefix.contains("//"), !prefix.split(separator: "/").contains(where: { $0 == "." || $0 == ".." }) else {
            throw S3LocationError(setting: nil, value: url, reason: "has an empty, . or .. segment in its prefix")
        }
        guard let keyID = environment["AWS_ACCESS_KEY_ID"], !keyID.isEmpty else {
            throw S3LocationError(setting: "AWS_ACCESS_KEY_ID", value: "(unset)", reason: "is needed for \(url)")
        }
        guard let secret = environment["AWS_SECRET_ACCESS_KEY"], !secret.isEmpty else {
            throw S3LocationError(setting: "AWS_SECRET_ACCESS_KEY", value: "(unset)", reason: "is needed for \(url)")
        }
        let token = environment["AWS_SESSION_TOKEN"].flatMap { $0.isEmpty ? nil : $0 }
        let region = [environment["AWS_REGION"], environment["AWS_DEFAULT_REGION"]].compactMap { $0 }.first { !$0.isEmpty } ?? "us-east-1"
        let endpointVariable = environment["AWS_ENDPOINT_URL_S3"].map { _ in "AWS_ENDPOINT_URL_S3" } ?? "AWS_ENDPOINT_URL"
        if let endpoint = environment[endpointVariable], !endpoint.isEmpty {
            guard let parsed = URLComponents(string: endpoint), let scheme = parsed.scheme?.lowercased(), scheme == "http" || scheme == "https",
                let host = parsed.host, !host.isEmpty, parsed.query == nil, parsed.fragment == nil, parsed.user == nil, parsed.password == nil,
                !parsed.path.split(separator: "/").contains(where: { $0 == "." || $0 == ".." })
            else {
                // Never echo credentials written into the URL.
                let shown = URLComponents(string: endpoint).map { "\($0.scheme ?? "?")://\($0.host ?? "?")…" } ?? "(unparsable)"
                throw S3LocationError(
                    setting: endpointVariable, value: shown, reason: "is not an http(s)://host[:port][/path] URL without credentials or query")
            }
            let defaultPort = scheme == "https" ? 443 : 80
            let authority = parsed.port.map { $0 == defaultPort ? host : "\(host):\($0)" } ?? host
            origin = "\(scheme)://\(authority)"
            self.host = authority
            var base = parsed.percentEncodedPath
            while base.hasSuffix("/") { base.removeLast() }
            basePath = base
            pathStyle = true
        } else {
            host = "\(bucket).s3.\(region).amazonaws.com"
            origin = "https://\(host)"
            basePath = ""
            pathStyle = false
        }
        self.bucket = bucket
        self.prefix = prefix
        self.region = region
        credentials = S3Credentials(accessKeyID: keyID, secretAccessKey: secret, sessionToken: token)
    }

    /// The object key of `name` under the prefix.
    package func key(_ name: String) -> String { prefix.isEmpty ? name : "\(prefix)/\(name)" }

    /// The encoded request path of an object key (or of the bucket for `nil`).
    func path(_ key: String?) -> String {
        let object = key.map { SigV4Signer.encodePath($0) } ?? "/"
        return pathStyle ? "\(basePath)/\(bucket)\(key == nil ? "" : object)" : object
    }

    /// `s3://bucket/prefix`, for messages.
    package var description: String { "s3://\(bucket)\(prefix.isEmpty ? "" : "/\(prefix)")" }
}

/// An S3 location that cannot be used: the URL itself (`setting` is `nil`) or the environment variable named by
/// `setting`, the value as it may be shown (never a credential), and why.
package struct S3LocationError: Error, CustomStringConvertible, Sendable {
    package var setting: String?
    package var value: String
    package var reason: String

    package var description: String { "\(setting.map { "\($0) " } ?? "")\(value): \(reason)" }
}
