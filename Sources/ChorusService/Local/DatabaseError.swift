/// An operation of either database (the embedded SQLite state, `LocalDatabase`; the shared PostgreSQL, `PostgresDatabase`) that
/// failed: `unavailable` when the server cannot be reached, stops answering within the deadline, is locked or is
/// shutting down (the service answers `503` with `Retry-After`: `ServiceError(_:during:)`), `failed` for anything
/// else. The description names the operation only: never the URL, the password or a query's values.
struct DatabaseError: Error, CustomStringConvertible, Sendable {
    enum Kind: Sendable { case unavailable, failed }
    let kind: Kind
    let operation: String
    let reason: String

    var description: String { "database \(operation): \(reason)" }
}
