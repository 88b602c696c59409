import ChorusSupport
import ChorusWire
import Foundation
import Hummingbird
import Logging
import PostgresNIO
import ServiceLifecycle

/// The PostgreSQL connection pool of one instance (`--database`), its schema, and the one place database errors
/// are converted. Every operation has a deadline, so a database that stops answering is an error within seconds,
/// never a request that hangs (the pool itself would wait for a connection forever).
final class PostgresDatabase: Sendable {
    let client: PostgresClient
    let location: DatabaseLocation
    /// Seconds an operation may take, connection included.
    let deadline: Double
    /// What the driver may log: nothing below critical (its debug lines carry queries and their values).
    let logger: Logger

    init(location: DatabaseLocation, deadline: Double = 5, maximumConnections: Int = 20, logger: Logger) throws {
        self.location = location
        self.deadline = deadline
        var quiet = logger
        quiet.logLevel = .critical  // errors surface through DatabaseError
        self.logger = quiet
        client = PostgresClient(
            configuration: try location.configuration(connectTimeout: max(1, Int(deadline)), maximumConnections: maximumConnections),
            backgroundLogger: quiet)
    }

    /// Runs `body` with the pool's connections within the deadline; converts what fails into `DatabaseError`. The body
    /// runs in a task of its own that the caller does not wait for past the deadline: the driver does not give up a
    /// query when its task is cancelled, so a server that stops answering without closing the connection would
    /// otherwise hold the caller until TCP notices (hours). The abandoned body is cancelled and ends when the
    /// connection does; its connection is not handed out meanwhile.
    func run<T: Sendable>(_ operation: String, deadline: Double? = nil, _ body: @escaping @Sendable (PostgresClient) async throws -> T) async throws
        -> T
    {
        let seconds = deadline ?? self.deadline
        let client = self.client
        let outcome = Outcome<T>()
        do {
            return try await withTaskCancellationHandler {
                try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
                    // A caller cancelled before this point is answered at once, and the body never starts.
                    guard outcome.set(continuation) else { return }
                    let work = Task {
                        do { outcome.finish(.success(try await body(client))) } catch { outcome.finish(.failure(error)) }
                    }
                    outcome.onAbandon { work.cancel() }
                    outcome.setTimer(
                        Task {
                            try? await Task.sleep(nanoseconds: UInt64(seconds * 1e9))
                            if Task.isCancelled { return }
                            outcome.finish(
                                .failure(DatabaseError(kind: .unavailable, operation: operation, reason: "no answer within \(Int(seconds)) s")))
                        })
                }
            } onCancel: {
                outcome.finish(.failure(CancellationError()))
            }
        } catch let error as PostgresTransactionError {
            // The transaction's own failure first (a limit the body refused, or the query that failed).
            let cause = error.closureError ?? error.beginError ?? error.commitError ?? error.rollbackError
            if let cause = cause as? ServiceError { throw cause }
            throw Self.converted(cause ?? error, operation: operation)
        } catch let error as ServiceError {
            throw error  // a limit the operation applied (429, 503)
        } catch is CancellationError {
            throw CancellationError()
        } catch {
            throw Self.converted(error, operation: operation)
        }
    }

    /// The first of an operation's result, its deadline and its caller's cancellation; the others are ignored, and the
    /// work is cancelled if it was not first.
    private final class Outcome<T: Sendable>: Sendable {
        private struct State {
            var continuation: CheckedContinuation<T, any Error>?
            var early: Result<T, any Error>?
            var done = false
            var succeeded = false
            var abandon: (@Sendable () -> Void)?
            var timer: Task<Void, Never>?
        }
        private let state = Locked(State())
        private struct Decided {
            var continuation: CheckedContinuation<T, any Error>?
            var abandon: (@Sendable () -> Void)?
            var timer: Task<Void, Never>?
        }

        func setTimer(_ task: Task<Void, Never>) {
            let cancelNow = state.withLock { state in
                let cancelNow = state.done
                state.timer = task
                return cancelNow
            }
            if cancelNow { task.cancel() }
        }

        /// Returns whether the work should start (`false`: it is already decided, and `continuation` resumed).
        func set(_ continuation: CheckedContinuation<T, any Error>) -> Bool {
            let early = state.withLock { state -> Result<T, any Error>? in
                if let early = state.early { return early }
                state.continuation = continuation
                return nil
            }
            guard let early else { return true }
            continuation.resume(with: early)
            return false
        }

        func onAbandon(_ action: @escaping @Sendable () -> Void) {
            let finishedFirst = state.withLock { state in
                let finishedFirst = state.done && !state.succeeded
                state.abandon = action
                return finishedFirst
            }
            if finishedFirst { action() }
        }

        func finish(_ result: Result<T, any Error>) {
            // What to resume, cancel and stop, outside the lock; nil when something finished first.
            let first = state.withLock { state -> Decided? in
                guard !state.done else { return nil }
                state.done = true
                if case .success = result { state.succeeded = true }
                let continuation = state.continuation
                state.continuation = nil
                if continuation == nil { state.early = result }
                return Decided(continuation: continuation, abandon: state.succeeded ? nil : state.abandon, timer: state.timer)
            }
            guard let first else { return }
            first.continuation?.resume(with: result)
            first.abandon?()
            first.timer?.cancel()
        }
    }

    /// Any error of a database operation as a `DatabaseError`.
    static func converted(_ error: any Error, operation: String) -> DatabaseError {
        switch error {
        case let error as DatabaseError: return error
        case let error as PSQLError: return convert(error, operation: operation)
        default: return DatabaseError(kind: .unavailable, operation: operation, reason: "the connection failed")
        }
    }

    /// PostgreSQL's SQLSTATE classes 08 (connection), 53 (resources), 57 (operator intervention: shutdown, statement
    /// timeout), 40001/40P01 (serialization, deadlock) and 55P03/25P03 (lock and idle timeouts) are the server being
    /// unavailable for now; other server errors are failures.
    static func convert(_ error: PSQLError, operation: String) -> DatabaseError {
        if error.code == .server {
            let state = error.serverInfo?[.sqlState] ?? ""
            let message = error.serverInfo?[.message] ?? "server error"
            // 55P03: a lock not granted within lock_timeout; 25P03: a transaction idle past its timeout.
            let transient = ["08", "53", "57"].contains(String(state.prefix(2))) || ["40001", "40P01", "55P03", "25P03"].contains(state)
            return DatabaseError(kind: transient ? .unavailable : .failed, operation: operation, reason: "\(state) \(message)")
        }
        switch error.code {
        case .authMechanismRequiresPassword, .unsupportedAuthMechanism, .saslError:
            return DatabaseError(kind: .failed, operation: operation, reason: "authentication failed")
        case .sslUnsupported:
            return DatabaseError(kind: .failed, operation: operation, reason: "the server does not offer TLS (sslmode)")
        default:
            return DatabaseError(kind: .unavailable, operation: operation, reason: "the connection failed")
        }
    }

    // MARK: schema

    /// Schema versions, each applied once, in order, in one transaction with the version recorded; a transaction-level
    /// advisory lock makes instances starting at once apply them one after another (the second finds them applied).
    static let migrations: [(version: Int, statements: [String])] = [
        (
            1,
            [
                """
                CREATE TABLE chorus_renders (
                    id text PRIMARY KEY,
                    status text NOT NULL CHECK (status IN ('queued', 'running', 'done', 'failed')),
                    caller text NOT NULL,
                    request bytea,
                    format text,
                    created_at double precision NOT NULL,
                    expires_at double precision NOT NULL,
                    owner text,
                    lease_until timestamptz,
                    attempts integer NOT NULL DEFAULT 0,
                    progress text,
                    record text,
                    queued_at timestamptz NOT NULL DEFAULT clock_timestamp(),
                    started_at timestamptz,
                    finished_at timestamptz
                )
                """,
                "CREATE INDEX chorus_renders_claimable ON chorus_renders (queued_at) WHERE status IN ('queued', 'running')",
                "CREATE INDEX chorus_renders_caller ON chorus_renders (caller) WHERE status IN ('queued', 'running')",
                "CREATE INDEX chorus_renders_expiry ON chorus_renders (expires_at)",
            ]
        ),
        (
            2,
            [
                """
                CREATE TABLE chorus_rate_limits (
                    caller text PRIMARY KEY,
                    tokens double precision NOT NULL,
                    updated_at timestamptz NOT NULL
                )
                """
            ]
        ),
        (
            3,
            [
                """
                CREATE TABLE chorus_lexicons (
                    caller text NOT NULL,
                    name text NOT NULL,
                    body text NOT NULL,
                    entries integer NOT NULL,
                    digest text NOT NULL,
                    updated_at double precision NOT NULL,
                    PRIMARY KEY (caller, name)
                )
                """
            ]
        ),
    ]

    static let migrationLock = 0x43_68_6F_72_75_73  // "Chorus"

    /// Migrates the database at `location` through a pool of its own, at start, before the service takes requests.
    /// - Throws: `ConfigurationError` naming `--database` (masked) and why.
    static func prepare(_ location: DatabaseLocation, url: String, logger: Logger) async throws {
        let database = try PostgresDatabase(location: location, deadline: 60, maximumConnections: 1, logger: logger)
        do {
            let applied = try await withThrowingTaskGroup(of: [Int]?.self) { group in
                group.addTask {
                    await database.client.run()
                    return nil
                }
                defer { group.cancelAll() }
                return try await database.migrate()
            }
            if !applied.isEmpty {
                logger.info("database schema migrated", metadata: ["versions": .string(applied.map(String.init).joined(separator: ","))])
            }
        } catch {
            throw ConfigurationError(
                setting: .database, value: DatabaseLocation.masked(url),
                reason: "cannot be used: \(PostgresDatabase.converted(error, operation: "migrate"))")
        }
    }

    /// Brings the schema to the latest version; returns the versions applied.
    @discardableResult
    func migrate() async throws -> [Int] {
        let logger = self.logger
        return try await run("migrate", deadline: max(deadline, 60)) { client in
            try await client.withTransaction(logger: logger) { connection in
                try await connection.query("SELECT pg_advisory_xact_lock(\(Self.migrationLock))", logger: logger)
                try await connection.query(
                    "CREATE TABLE IF NOT EXISTS chorus_schema (version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())",
                    logger: logger)
                var current = 0
                for try await version in try await connection.query("SELECT coalesce(max(version), 0) FROM chorus_schema", logger: logger).decode(
                    Int.self)
                {
                    current = version
                }
                var applied: [Int] = []
                for migration in Self.migrations where migration.version > current {
                    for statement in migration.statements {
                        try await connection.query(PostgresQuery(unsafeSQL: statement), logger: logger)
                    }
                    try await connection.query("INSERT INTO chorus_schema (version) VALUES (\(migration.version))", logger: logger)
                    applied.append(migration.version)
                }
                return applied
            }
        }
    }
}

/// Runs the pool's connections for the life of the service.
struct DatabaseService: Service, CustomStringConvertible {
    let database: PostgresDatabase
    var description: String { "Database" }

    func run() async throws {
        await cancelWhenGracefulShutdown { await database.client.run() }
    }
}
