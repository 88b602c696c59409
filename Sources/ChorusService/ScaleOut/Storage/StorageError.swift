/// A blob store that failed: which operation on which object, and why, never with a credential. `unavailable`
/// (unreachable, timed out, 5xx) is the store's own trouble, for which the service answers `503` with
/// `Retry-After`; anything else is a fault of the request or the configuration.
struct StorageError: Error, CustomStringConvertible, Sendable {
    enum Kind: Sendable { case unavailable, denied, notFound, invalid }

    var kind: Kind
    var operation: String
    var key: String
    var reason: String

    var description: String { "storage \(operation) \(key): \(reason)" }
    var isUnavailable: Bool { kind == .unavailable }
}
