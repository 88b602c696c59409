/// An S3 request that failed: which operation on which object, and why, never with a credential. `unavailable`
/// (unreachable, timed out, 429 or 5xx) is the server's own trouble and worth trying again; `denied` (401/403),
/// `notFound` and `invalid` are not.
package struct S3Error: Error, CustomStringConvertible, Sendable {
    package enum Kind: Sendable { case unavailable, denied, notFound, invalid }

    package var kind: Kind
    package var operation: String
    package var key: String
    package var reason: String

    package init(kind: Kind, operation: String, key: String, reason: String) {
        self.kind = kind
        self.operation = operation
        self.key = key
        self.reason = reason
    }

    package var description: String { "storage \(operation) \(key): \(reason)" }
    package var isUnavailable: Bool { kind == .unavailable }
}
