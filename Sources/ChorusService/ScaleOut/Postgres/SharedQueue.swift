import ChorusWire
import Foundation
import Logging
import NIOCore
import PostgresNIO

/// The render index and job queue several instances share (`chorus_renders`, one row per render id). A render is
/// queued once however many instances are sent it at once (the id is the primary key), claimed by one instance with
/// `FOR UPDATE SKIP LOCKED` under a lease it renews, and completed only by the instance that holds the lease; a lease
/// that runs out (the instance died or lost the database) lets another instance claim the job again. Times of leases
/// are the database's clock, never an instance's. Every change is announced on the channel `chorus_renders`
/// (`<id> <status>`) for instances waiting on it.
struct SharedQueue: Sendable {
    let database: PostgresDatabase
    /// This process, as the owner of the jobs it runs.
    let instance: String
    /// Seconds a claim lasts unless renewed.
    let lease: Double
    /// Claims after which a job whose instance keeps disappearing is failed rather than tried again.
    static let maxAttempts = 3
    static let channel = "chorus_renders"

    enum Status: String, Sendable { case queued, running, done, failed }

    /// A render's row.
    struct Entry: Sendable {
        var id: String
        var status: Status
        var caller: String
        var createdAt: Double
        var expiresAt: Double
        var attempts: Int
        var progress: RenderProgressBody?
        /// The finished render (done or failed).
        var record: StoredRender?
        /// The render request as sent (JSON), while it is queued or running.
        var request: Data?
        var format: String?
    }

    /// What `enqueue` did.
    enum Enqueued: Sendable {
        /// A new job (or one that failed before, queued again).
        case queued
        /// The render exists already: queued, running or finished.
        case existing(Entry)
    }

    private static let columns = "id, status, caller, created_at, expires_at, attempts, progress, record, format"

    private static func entry(_ row: PostgresRow) throws -> Entry {
        let (id, status, caller, created, expires, attempts, progress, record, format) =
            try row.decode((String, String, String, Double, Double, Int, String?, String?, String?).self)
        let decoder = JSONDecoder()
        return Entry(
            id: id, status: Status(rawValue: status) ?? .failed, caller: caller, createdAt: created, expiresAt: expires, attempts: attempts,
            progress: progress.flatMap { try? decoder.decode(RenderProgressBody.self, from: Data($0.utf8)) },
            record: record.flatMap { try? decoder.decode(StoredRender.self, from: Data($0.utf8)) }, format: format)
    }

    private static func text<T: Encodable>(_ value: T) throws -> String { String(decoding: try JSONEncoder().encode(value), as: UTF8.self) }

    /// Queues render `id` unless it exists (then returns it); a failed one is queued again. Per caller at most
    /// `perCaller` queued or running, and at most `queueLimit` queued in all, counted under a per-caller advisory
    /// lock in the same transaction, so concurrent requests on several instances cannot exceed them.
    /// - Throws: `ServiceError` 429 / 503 beyond the limits, `DatabaseError`.
    func enqueue(id: String, caller: String, request: Data, format: String, createdAt: Double, expiresAt: Double, perCaller: Int, queueLimit: Int)
        async throws -> Enqueued
    {
        let requestBytes = ByteBuffer(data: request)
        return try await database.run("enqueue render") { client in
            try await client.withTransaction(logger: database.logger) { connection -> Enqueued in
                // The caller's lock first (an instance inserting the same render for this caller commits before this
                // one looks), with server-side bounds: a peer that froze holding the lock, or this transaction left
                // open by a client that vanished, cannot hold anyone for long.
                try await connection.query(
                    """
                    SELECT set_config('lock_timeout', '2s', true), set_config('idle_in_transaction_session_timeout', '15s', true)
                    """, logger: database.logger)
                try await connection.query("SELECT pg_advisory_xact_lock(hashtext('chorus-caller:' || \(caller)))", logger: database.logger)
                for try await row in try await connection.query(
                    "SELECT \(unescaped: Self.columns) FROM chorus_renders WHERE id = \(id) AND expires_at > \(createdAt) AND status <> 'failed'",
                    logger: database.logger)
                {
                    return .existing(try Self.entry(row))
                }
                for try await count in try await connection.query(
                    "SELECT count(*)::int FROM chorus_renders WHERE caller = \(caller) AND status IN ('queued', 'running')", logger: database.logger
                ).decode(Int.self)
                where count >= perCaller {
                    throw ServiceError(
                        .tooManyRequests, .tooManyRenders,
                        "this key already has \(perCaller) renders queued or running; try again when one finishes", retryAfter: 5)
                }
                for try await count in try await connection.query(
                    "SELECT count(*)::int FROM chorus_renders WHERE status = 'queued'", logger: database.logger
                ).decode(Int.self) where count >= queueLimit {
                    throw ServiceError.overloaded(retryAfter: 5)
                }
                // A row of the same id inserted meanwhile by another instance wins: this one then finds it.
                let inserted = try await connection.query(
                    """
                    INSERT INTO chorus_renders (id, status, caller, request, format, created_at, expires_at)
                    VALUES (\(id), 'queued', \(caller), \(requestBytes), \(format), \(createdAt), \(expiresAt))
                    ON CONFLICT (id) DO UPDATE SET status = 'queued', caller = excluded.caller, request = excluded.request,
                        format = excluded.format, created_at = excluded.created_at, expires_at = excluded.expires_at, owner = NULL, lease_until = NULL, attempts = 0,
                        progress = NULL, record = NULL, queued_at = clock_timestamp(), started_at = NULL, finished_at = NULL
                    WHERE chorus_renders.status = 'failed' OR chorus_renders.expires_at <= \(createdAt)
                    RETURNING id
                    """, logger: database.logger
                ).collect()
                if inserted.isEmpty {
                    for try await row in try await connection.query(
                        "SELECT \(unescaped: Self.columns) FROM chorus_renders WHERE id = \(id)", logger: database.logger)
                    {
                        return .existing(try Self.entry(row))
                    }
                }
                try await connection.query("SELECT pg_notify(\(Self.channel), \(id) || ' queued')", logger: database.logger)
                return .queued
            }
        }
    }

    /// A claimed job: the row and the request to run.
    struct Claim: Sendable {
        var job: Entry
        var request: Data
        /// Seconds from queued to claimed (the database's clock).
        var waited: Double
    }

    /// Claims the oldest claimable job — queued, or running under a lease that has run out — or job `id` only. Jobs
    /// claimed `maxAttempts` times whose lease ran out are failed instead ("interrupted").
    func claim(id: String? = nil) async throws -> Claim? {
        let me = instance
        let lease = lease
        let maxAttempts = Self.maxAttempts
        return try await database.run("claim a render") { client in
            _ = try await client.query(
                """
                WITH given_up AS (
                    UPDATE chorus_renders SET status = 'failed', request = NULL, owner = NULL, lease_until = NULL, finished_at = clock_timestamp(),
                        record = NULL
                    WHERE status = 'running' AND lease_until < clock_timestamp() AND attempts >= \(maxAttempts)
                    RETURNING id
                )
                SELECT pg_notify(\(Self.channel), id || ' failed') FROM given_up
                """, logger: database.logger
            ).collect()
            let rows = try await client.query(
                """
                UPDATE chorus_renders SET status = 'running', owner = \(me), lease_until = clock_timestamp() + make_interval(secs => \(lease)),
                    attempts = attempts + 1, started_at = clock_timestamp()
                WHERE id = (
                    SELECT id FROM chorus_renders
                    WHERE (\(id)::text IS NULL OR id = \(id)) AND (status = 'queued' OR (status = 'running' AND lease_until < clock_timestamp()))
                        AND attempts < \(maxAttempts)
                    ORDER BY queued_at FOR UPDATE SKIP LOCKED LIMIT 1)
                RETURNING \(unescaped: Self.columns), request, extract(epoch FROM clock_timestamp() - queued_at)::float8
                """, logger: database.logger
            ).collect()
            guard let row = rows.first else { return nil }
            let job = try Self.entry(row)
            let columns = row.makeRandomAccess()
            let request = try columns[9].decode(ByteBuffer?.self)
            let waited = try columns[10].decode(Double.self)
            return Claim(job: job, request: request.map { Data(buffer: $0) } ?? Data(), waited: waited)
        }
    }

    /// Extends this instance's lease on `id` (and records its progress, if given); `false` when the job is no longer
    /// this instance's (its lease ran out and another instance claimed it, or it was deleted).
    func renew(_ id: String, progress: RenderProgressBody?, deadline: Double? = nil) async throws -> Bool {
        let me = instance
        let lease = lease
        let progressText = try progress.map(Self.text)
        return try await database.run("renew a lease", deadline: deadline) { client in
            let rows = try await client.query(
                """
                WITH renewed AS (
                    UPDATE chorus_renders SET lease_until = clock_timestamp() + make_interval(secs => \(lease)), progress = coalesce(\(progressText), progress)
                    WHERE id = \(id) AND owner = \(me) AND status = 'running'
                    RETURNING id
                )
                SELECT pg_notify(\(Self.channel), id || ' running') FROM renewed
                """, logger: database.logger
            ).collect()
            return !rows.isEmpty
        }
    }

    /// Records the end of job `id` (done or failed, with its record) if this instance still holds it; `false` if it
    /// does not (another instance took it over: that one completes it).
    func complete(_ id: String, record: StoredRender, deadline: Double? = nil) async throws -> Bool {
        let me = instance
        let status = record.isDone ? "done" : "failed"
        let recordText = try Self.text(record)
        return try await database.run("complete a render", deadline: deadline) { client in
            let rows = try await client.query(
                """
                WITH completed AS (
                    UPDATE chorus_renders SET status = \(status), record = \(recordText), request = NULL, progress = NULL, owner = NULL,
                        lease_until = NULL, finished_at = clock_timestamp(), expires_at = \(record.expiresAt)
                    WHERE id = \(id) AND owner = \(me) AND status = 'running'
                    RETURNING id
                )
                SELECT pg_notify(\(Self.channel), id || ' ' || \(status)) FROM completed
                """, logger: database.logger
            ).collect()
            return !rows.isEmpty
        }
    }

    /// Gives job `id` back to the queue (this instance is stopping before it ran or finished it).
    func release(_ id: String, deadline: Double? = nil) async throws {
        let me = instance
        _ = try await database.run("release a render", deadline: deadline) { client in
            _ = try await client.query(
                """
                WITH released AS (
                    UPDATE chorus_renders SET status = 'queued', owner = NULL, lease_until = NULL, attempts = greatest(attempts - 1, 0), progress = NULL
                    WHERE id = \(id) AND owner = \(me) AND status = 'running'
                    RETURNING id
                )
                SELECT pg_notify(\(Self.channel), id || ' queued') FROM released
                """, logger: database.logger
            ).collect()
        }
    }

    /// Render `id`'s row, unless it has expired.
    func entry(_ id: String, now: Double = Date().timeIntervalSince1970) async throws -> Entry? {
        try await database.run("read a render") { client in
            for try await row in try await client.query(
                "SELECT \(unescaped: Self.columns) FROM chorus_renders WHERE id = \(id) AND expires_at > \(now)", logger: database.logger)
            {
                return try Self.entry(row)
            }
            return nil
        }
    }

    /// Makes finished render `id` expire now (a `DELETE` does this before removing its files: a failure in between
    /// leaves an expired row, which the sweep finishes and a new request replaces); `false` if there is none or it is
    /// queued or running.
    func expire(_ id: String) async throws -> Bool {
        try await database.run("expire a render") { client in
            !(try await client.query(
                """
                UPDATE chorus_renders SET expires_at = 0 WHERE id = \(id) AND status IN ('done', 'failed') RETURNING id
                """, logger: database.logger
            ).collect()).isEmpty
        }
    }

    /// Gives back to the queue every job this instance holds except `running` (claims whose answer was lost: the
    /// claim was made, the instance never heard of it).
    func releaseUnknown(running: [String]) async throws {
        let me = instance
        _ = try await database.run("release lost claims") { client in
            try await client.query(
                """
                WITH released AS (
                    UPDATE chorus_renders SET status = 'queued', owner = NULL, lease_until = NULL, attempts = greatest(attempts - 1, 0)
                    WHERE owner = \(me) AND status = 'running' AND NOT (id = ANY(\(running)))
                    RETURNING id
                )
                SELECT pg_notify(\(Self.channel), id || ' queued') FROM released
                """, logger: database.logger
            ).collect()
        }
    }

    /// Deletes render `id`'s row if it has finished and `expire` expired it, telling every instance (`<id> deleted
    /// <created_at>`: they drop their local copies of that render, not of one made again since); `false` otherwise.
    func delete(_ id: String) async throws -> Bool {
        try await database.run("delete a render") { client in
            !(try await client.query(
                """
                WITH deleted AS (
                    DELETE FROM chorus_renders WHERE id = \(id) AND status IN ('done', 'failed') AND expires_at = 0 RETURNING id, created_at
                )
                SELECT pg_notify(\(Self.channel), id || ' deleted ' || created_at::text) FROM deleted
                """, logger: database.logger
            ).collect()).isEmpty
        }
    }

    /// Which of `ids` have a row (in chunks of 500).
    func existing(_ ids: [String]) async throws -> Set<String> {
        var found: Set<String> = []
        for start in stride(from: 0, to: ids.count, by: 500) {
            let chunk = Array(ids[start..<min(ids.count, start + 500)])
            found.formUnion(
                try await database.run("look up renders") { client in
                    var rows: [String] = []
                    for try await id in try await client.query("SELECT id FROM chorus_renders WHERE id = ANY(\(chunk))", logger: database.logger)
                        .decode(String.self)
                    {
                        rows.append(id)
                    }
                    return rows
                })
        }
        return found
    }

    /// Counts of queued and running jobs, all instances together.
    func depth() async throws -> (queued: Int, running: Int) {
        try await database.run("count renders") { client in
            var queued = 0
            var running = 0
            for try await (status, count) in try await client.query(
                "SELECT status, count(*)::int FROM chorus_renders WHERE status IN ('queued', 'running') GROUP BY status", logger: database.logger
            ).decode((String, Int).self) {
                if status == "queued" { queued = count } else { running = count }
            }
            return (queued, running)
        }
    }

    static let sweepLock = 0x43_68_6F_72_75_74  // one sweeper at a time, all instances together

    /// Removes expired renders, on one instance at a time: under a transaction-level advisory lock (an instance that
    /// finds it held skips this round), each expired render's files go first (`removeFiles`), then the rows, so a crash
    /// in between leaves rows the next sweep finishes, never files that no row names. `alsoLocked` runs under the same
    /// lock (the shared clips' sweep). Returns the renders removed and what `alsoLocked` returned, or `nil` if another
    /// instance is sweeping.
    func sweep(
        now: Double = Date().timeIntervalSince1970, limit: Int = 1_000,
        removeFiles: @escaping @Sendable (_ id: String, _ record: StoredRender?, _ format: String?) async throws -> Void,
        alsoLocked: @escaping @Sendable () async throws -> Int
    ) async throws -> (renders: Int, other: Int)? {
        try await database.run("sweep renders", deadline: 300) { client in
            try await client.withTransaction(logger: database.logger) { connection -> (renders: Int, other: Int)? in
                var locked = false
                for try await got in try await connection.query(
                    """
                    SELECT pg_try_advisory_xact_lock(\(Self.sweepLock)), set_config('idle_in_transaction_session_timeout', '300s', true)
                    """, logger: database.logger
                ).decode((Bool, String).self) {
                    locked = got.0
                }
                guard locked else { return nil }
                // The rows are locked while their files go: a render queued again meanwhile under the same id waits
                // for this sweep (and then finds no row) instead of being published into files about to be deleted.
                let expired = try await connection.query(
                    "SELECT \(unescaped: Self.columns) FROM chorus_renders WHERE expires_at <= \(now) ORDER BY expires_at LIMIT \(limit) FOR UPDATE SKIP LOCKED",
                    logger: database.logger
                ).collect()
                var removed: [String] = []
                for row in expired {
                    let job = try Self.entry(row)
                    try await removeFiles(job.id, job.record, job.format)
                    removed.append(job.id)
                }
                if !removed.isEmpty {
                    try await connection.query(
                        "DELETE FROM chorus_renders WHERE id = ANY(\(removed)) AND expires_at <= \(now)", logger: database.logger)
                }
                return (removed.count, try await alsoLocked())
            }
        }
    }
}

extension SharedQueue: SharedQueueing {
    var deadline: Double { database.deadline }
}
