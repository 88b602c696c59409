import ChorusSupport
import ChorusWire
import Foundation
import Logging
import NIOCore
import NIOPosix
import SQLiteNIO

/// The embedded state of one instance (no `--database`): SQLite in `<data>/chorus.sqlite`, in WAL mode, on a thread of
/// its own (never an event loop, never a task's thread, and never NIO's shared pool, which file serving uses: SQLite
/// waiting for a lock another process holds must not hold up anything else). Holds the render index and the renders accepted but not
/// yet finished (so a restart runs them instead of losing them), the clip index and the request limits' buckets; the
/// files stay in the data folder.
///
/// Statements run one at a time on the one connection; each is atomic on its own (multi-statement work runs only at
/// start, before anything else uses the database). Errors are converted here, once: a full or unwritable disk is the
/// `POSIXError` the routes answer 507 for, a database locked by another process beyond the busy timeout is 503, the
/// rest a `DatabaseError` (500) naming the file and the operation.
final class LocalDatabase: Sendable {
    static let fileName = "chorus.sqlite"
    /// How long a statement waits for a lock another process holds before it fails (`DatabaseError`, 503).
    static let busyTimeout = 5.0
    /// How long, after a statement found the database locked, background work gives up at once (`rows(…background:)`).
    static let backgroundPause = 30.0

    /// The schema this build writes (`PRAGMA user_version`).
    static let schemaVersion = 5

    let path: String
    private let connection: SQLiteConnection
    private let thread: NIOThreadPool

    private init(path: String, connection: SQLiteConnection, thread: NIOThreadPool) {
        self.path = path
        self.connection = connection
        self.thread = thread
    }

    private let closed = Locked(false)

    deinit {
        guard !closed.value else { return }
        let thread = self.thread
        connection.close().whenComplete { _ in thread.shutdownGracefully { _ in } }
    }

    /// Closes the connection (checkpointing the WAL) and stops its thread; nothing may use the database afterwards.
    /// `chorus serve` does this last, when it stops (an instance that is only released does it on release).
    func close() async {
        guard
            !closed.withLock({
                let was = $0
                $0 = true
                return was
            })
        else { return }
        try? await connection.close()
        try? await thread.shutdownGracefully()
    }

    /// Opens (creating) `<folder>/chorus.sqlite` and brings its schema up to date. Two processes opening it at once are
    /// safe: the migration runs in an immediate transaction, the second waits for the first and finds nothing to do;
    /// a database already current is opened without taking the write lock.
    /// - Throws: `ConfigurationError` naming the file when it cannot be opened, is not a database, or is newer.
    static func open(in folder: URL, logger: Logger) async throws -> LocalDatabase {
        let path = folder.appendingPathComponent(fileName).path
        do {
            var quiet = logger
            quiet.logLevel = .critical
            let thread = NIOThreadPool(numberOfThreads: 1)
            thread.start()
            let connection: SQLiteConnection
            do {
                connection = try await SQLiteConnection.open(
                    storage: .file(path: path), threadPool: thread, logger: quiet,
                    on: MultiThreadedEventLoopGroup.singleton.any())
            } catch {
                try? await thread.shutdownGracefully()
                throw error
            }
            let database = LocalDatabase(path: path, connection: connection, thread: thread)
            try await database.migrate(logger: logger)
            return database
        } catch let error as ConfigurationError {
            throw error
        } catch {
            throw ConfigurationError(setting: .dataDirectory, value: path, reason: "cannot open the service's state (\(Self.describe(error)))")
        }
    }

    private func migrate(logger: Logger) async throws {
        // Replaces sqlite-nio's busy handler, which retries forever: another process holding the lock is an error
        // after 5 s, never a hang.
        try await statement("PRAGMA busy_timeout = \(Int(Self.busyTimeout * 1000))")
        // Processes creating the file at the same moment can meet in SQLite's deadlock case (one holds the write lock
        // and waits for the other's read lock): the one told so at once steps back and tries again.
        // Within 10 s in all: a process holding the lock longer is an error naming the file.
        let deadline = Date().addingTimeInterval(10)
        while true {
            do {
                try await migrateOnce(logger: logger)
                return
            } catch let error as DatabaseError where error.kind == .unavailable && Date() < deadline {
                try await Task.sleep(nanoseconds: UInt64.random(in: 20_000_000...120_000_000))
            }
        }
    }

    private func migrateOnce(logger: Logger) async throws {
        try await statement("PRAGMA journal_mode = WAL")
        // WAL + NORMAL: a committed change survives the process being killed (not necessarily a power cut).
        try await statement("PRAGMA synchronous = NORMAL")
        // A schema already current needs no write lock (in WAL mode reading never waits for a writer): the usual start.
        guard try checkedVersion(try await rows("PRAGMA user_version", operation: "migration")) < Self.schemaVersion else { return }
        do {
            try await upgrade(on: MultiThreadedEventLoopGroup.singleton.any(), logger: logger).get()
        } catch {
            throw convert(error, operation: "migration")
        }
    }

    /// The schema version in `rows` (of `PRAGMA user_version`).
    /// - Throws: `ConfigurationError` when a newer chorus wrote it.
    private func checkedVersion(_ rows: [SQLiteRow]) throws -> Int {
        let version = rows.first?.column("user_version")?.integer ?? 0
        guard version <= Self.schemaVersion else {
            throw ConfigurationError(
                setting: .dataDirectory, value: path,
                reason: "the state was written by a newer chorus (schema \(version), this one knows \(Self.schemaVersion))")
        }
        return version
    }

    /// Brings the schema up to date in one immediate transaction. Its statements are chained on an event loop, not
    /// awaited one by one: between two of them nothing waits for Swift's cooperative threads, so the write lock is
    /// held only for SQLite's own work however busy the process is (a busy process had held it for as long as its
    /// tasks waited for a thread, and openers waiting beside it gave up).
    private func upgrade(on loop: any EventLoop, logger: Logger) -> EventLoopFuture<Void> {
        let connection = self.connection
        let quiet = Logger(label: "chorus.sqlite", factory: { _ in SwiftLogNoOpLogHandler() })
        @Sendable func run(_ sql: String) -> EventLoopFuture<[SQLiteRow]> {
            let collected = Locked<[SQLiteRow]>([])
            return connection.query(sql, [], logger: quiet) { row in collected.withLock { $0.append(row) } }.hop(to: loop).map { collected.value }
        }
        @Sendable func run(_ statements: ArraySlice<String>) -> EventLoopFuture<Void> {
            guard let first = statements.first else { return loop.makeSucceededVoidFuture() }
            return run(first).flatMap { _ in run(statements.dropFirst()) }
        }
        let path = self.path
        return run("BEGIN IMMEDIATE").flatMap { _ in
            logger.debug("state upgrade started", metadata: ["file": .string(path)])
            return run("PRAGMA user_version")
        }.flatMapThrowing { rows in
            Self.upgradeStatements(from: try self.checkedVersion(rows))
        }.flatMap { statements in
            run(statements[...])
        }.flatMapError { error in
            run("ROLLBACK").flatMapThrowing { _ in throw error }.flatMapErrorThrowing { _ in throw error }
        }
    }

    /// What takes a database of schema `version` to `schemaVersion`, ending with the new version and `COMMIT`.
    static func upgradeStatements(from version: Int) -> [String] {
        var statements: [String] = []
        if version < 1 {
            // renders: finished renders (done or failed), the record as the routes serve it.
            // jobs (renamed accepted in schema 4): accepted renders not yet finished, with the request that runs them again after a restart.
            statements += [
                """
                CREATE TABLE renders (
                    id TEXT PRIMARY KEY,
                    status TEXT NOT NULL CHECK (status IN ('done', 'failed')),
                    record TEXT NOT NULL,
                    created_at REAL NOT NULL,
                    expires_at REAL NOT NULL
                ) WITHOUT ROWID
                """, "CREATE INDEX renders_expiry ON renders (expires_at)",
                """
                CREATE TABLE jobs (
                    id TEXT PRIMARY KEY,
                    caller TEXT NOT NULL,
                    request TEXT NOT NULL,
                    created_at REAL NOT NULL,
                    expires_at REAL NOT NULL
                ) WITHOUT ROWID
                """,
            ]
        }
        if version < 2 {
            // clips: uploaded clips (their audio is clips/<id>.audio), what each is and when it expires.
            statements += [
                """
                CREATE TABLE clips (
                    id TEXT PRIMARY KEY,
                    record TEXT NOT NULL,
                    expires_at REAL NOT NULL
                ) WITHOUT ROWID
                """, "CREATE INDEX clips_expiry ON clips (expires_at)",
            ]
        }
        if version < 3 {
            // rate_limits: the request buckets of callers (key digests) not yet full again, kept across restarts.
            statements += [
                """
                CREATE TABLE rate_limits (
                    caller TEXT PRIMARY KEY,
                    tokens REAL NOT NULL,
                    updated_at REAL NOT NULL
                ) WITHOUT ROWID
                """
            ]
        }
        if version < 4 {
            // accepted: the table of accepted renders, named `jobs` up to schema 3 (a "job" is now only `--jobs`, work in parallel).
            statements.append("ALTER TABLE jobs RENAME TO accepted")
        }
        if version < 5 {
            // lexicons: pronunciation lexicons stored per key (`LexiconStore`), their entries as canonical JSON.
            statements += [
                """
                CREATE TABLE lexicons (
                    caller TEXT NOT NULL,
                    name TEXT NOT NULL,
                    body TEXT NOT NULL,
                    entries INTEGER NOT NULL,
                    digest TEXT NOT NULL,
                    updated_at REAL NOT NULL,
                    PRIMARY KEY (caller, name)
                ) WITHOUT ROWID
                """
            ]
        }
        return statements + ["PRAGMA user_version = \(schemaVersion)", "COMMIT"]
    }

    /// When a statement last found the database locked by another process.
    private let lockedAt = Locked<Double?>(nil)
    private let lockWaitCount = Locked(0)
    /// How many statements have waited out the busy timeout on a lock another process held (and failed).
    var lockWaits: Int { lockWaitCount.value }
    /// Background statements run one at a time, each deciding when its turn comes whether to try.
    private let backgroundTurn = SerialChanges()

    /// Runs one statement; returns its rows (`RETURNING` included).
    ///
    /// Statements run one at a time on the database's thread, and a write that finds the database locked by another
    /// process waits there up to `busyTimeout`. So that requests queued behind never wait for more than one such wait
    /// ahead of their own, background work (`background`: the retention sweeps, keeping the request limits) runs one
    /// statement at a time and gives up at once for `backgroundPause` after any statement found the database locked;
    /// it tries again in its next round.
    /// - Throws: `POSIXError` (disk full or unwritable: 507), `DatabaseError` (locked: 503; else 500).
    @discardableResult
    func rows(_ sql: String, _ binds: [SQLiteData] = [], operation: String = "query", background: Bool = false) async throws -> [SQLiteRow] {
        if background {
            return try await backgroundTurn.run {
                if let locked = self.lockedAt.value, Date().timeIntervalSince1970 - locked < Self.backgroundPause {
                    throw DatabaseError(
                        kind: .unavailable, operation: "\(operation) (\(Self.fileName))", reason: "locked by another process (left for later)")
                }
                return try await self.rows(sql, binds, operation: operation)
            }
        }
        do {
            let collected = Locked<[SQLiteRow]>([])
            try await connection.query(sql, binds) { row in collected.withLock { $0.append(row) } }
            return collected.value
        } catch {
            let converted = convert(error, operation: operation)
            if let locked = converted as? DatabaseError, locked.kind == .unavailable {
                lockedAt.withLock { $0 = Date().timeIntervalSince1970 }
                lockWaitCount.withLock { $0 += 1 }
            }
            throw converted
        }
    }

    private func statement(_ sql: String) async throws {
        try await rows(sql, operation: "migration")
    }

    /// The one place SQLite's errors become the service's.
    private func convert(_ error: any Error, operation: String) -> any Error {
        guard let error = error as? SQLiteError else { return error }
        let reason = "\(error.reason)"
        switch error.reason {
        case .full: return POSIXError(.ENOSPC)
        case .readOnly, .permission: return POSIXError(.EROFS)
        case .busy, .locked:
            return DatabaseError(kind: .unavailable, operation: "\(operation) (\(Self.fileName))", reason: "locked by another process")
        default:
            if reason.hasPrefix("ioError") || reason.hasPrefix("readonly") { return POSIXError(.EIO) }
            if reason.hasPrefix("busy") || reason.hasPrefix("locked") {
                return DatabaseError(kind: .unavailable, operation: "\(operation) (\(Self.fileName))", reason: "locked by another process")
            }
            return DatabaseError(kind: .failed, operation: "\(operation) (\(Self.fileName))", reason: Self.describe(error))
        }
    }

    private static func describe(_ error: any Error) -> String {
        (error as? SQLiteError).map { "\($0.reason): \($0.message)" } ?? "\(error)"
    }
}
