import Foundation

/// How a failed connection is described to people: "cannot reach https://host:443 (connection refused)" rather
/// than the networking library's own wording. The one table for every outbound call (voice providers, S3).
public enum ConnectionFailure {
    /// Phrases of SwiftNIO's and the C library's errors, and what they mean.
    static let reasons: [(needle: String, reason: String)] = [
        ("Connection refused", "connection refused"), ("Connection reset", "connection reset"),
        ("remoteConnectionClosed", "the server closed the connection"),
        ("Name or service not known", "unknown host"), ("No address associated", "unknown host"),
        ("Network is unreachable", "network unreachable"),
    ]

    /// `cannot reach <origin> (<reason>)`: the reason from the table, else the error's own text with `secrets` redacted.
    public static func describe(_ error: any Error, origin: String, secrets: [String]) -> String {
        let detail = String(describing: error)
        let reason = reasons.first { detail.contains($0.needle) }?.reason ?? Secrets.redact(detail, secrets: secrets)
        return "cannot reach \(origin) (\(reason))"
    }

    /// `scheme://host[:port]` of `url`, or "the server" when it cannot be parsed.
    public static func origin(of url: String) -> String {
        URL(string: url).map { "\($0.scheme ?? "http")://\($0.host ?? "")\($0.port.map { ":\($0)" } ?? "")" } ?? "the server"
    }
}
