import ChorusSupport
import ChorusWire
import Foundation
import SQLiteNIO

/// Finished renders (done or failed), indexed in memory and recorded in the embedded database (`LocalDatabase`,
/// table `renders`), their files in each render's folder; and the renders accepted but not finished (table `accepted`,
/// with their requests), which the next start runs again instead of losing them.
///
/// Lookups read the in-memory index under a lock and never wait: every audio request reads it, some on an event
/// loop. Changes run one at a time (`SerialChanges`), the database first and the index after, so a `DELETE` and a
/// late update of the same render cannot interleave, and a change the database refused is not in the index either.
final class RenderStore: Sendable {
    /// A render accepted before a restart and not finished: what runs it again.
    struct Pending: Sendable {
        let id: String
        let caller: String
        let request: Data
        let createdAt: Double
        let expiresAt: Double

        /// A row of `columns`; one missing a column is incomplete (forgotten when loading, never run again).
        init?(row: SQLiteRow) {
            guard let id = row.column("id")?.string, let request = row.column("request")?.string,
                let created = row.column("created_at")?.double, let expires = row.column("expires_at")?.double
            else { return nil }
            self.init(
                id: id, caller: row.column("caller")?.string ?? "anonymous", request: Data(request.utf8), createdAt: created, expiresAt: expires)
        }

        init(id: String, caller: String, request: Data, createdAt: Double, expiresAt: Double) {
            self.id = id
            self.caller = caller
            self.request = request
            self.createdAt = createdAt
            self.expiresAt = expiresAt
        }

        static let columns = "id, caller, request, created_at, expires_at"
    }

    /// What `load` found.
    struct Loaded: Sendable {
        /// Renders an earlier version accepted and never finished, now recorded failed ("interrupted").
        var interrupted = 0
        /// Renders to run again (oldest first).
        var pending: [Pending] = []
    }

    private let data: DataDirectory
    private let database: LocalDatabase
    private let changes = SerialChanges()
    /// The in-memory index of the finished renders, by id.
    private let index = Locked<[String: StoredRender]>([:])

    init(data: DataDirectory, database: LocalDatabase) {
        self.data = data
        self.database = database
    }

    /// Reads the index at start: moves the records of earlier versions (`renders/<id>/render.json`) into the database,
    /// deletes expired renders, clears the files of unfinished ones and returns those to run again. With a shared queue
    /// (`--database`) nothing is run again here: the shared queue has them.
    /// - Throws: `POSIXError`/`DatabaseError` when the database cannot be read or written.
    func load(now: Double = Date().timeIntervalSince1970, retention: Double, sharedQueue: Bool = false) async throws -> Loaded {
        try await changes.run { try await self.loadSerially(now: now, retention: retention, sharedQueue: sharedQueue) }
    }

    private func loadSerially(now: Double, retention: Double, sharedQueue: Bool) async throws -> Loaded {
        let files = FileManager.default
        let folders = ((try? files.contentsOfDirectory(atPath: data.renders.path)) ?? []).compactMap {
            DataDirectory.validID($0, length: RenderIdentity.length)
        }
        for id in folders {
            let file = data.render(id).url(.record)
            guard let json = try? Data(contentsOf: file) else { continue }
            if let stored = try? JSONDecoder().decode(StoredRender.self, from: json) { try await write(stored) }
            try? files.removeItem(at: file)
        }
        for row in try await database.rows("DELETE FROM renders WHERE expires_at <= ? RETURNING id", [.float(now)], operation: "sweep") {
            if let id = row.column("id")?.string.flatMap({ DataDirectory.validID($0, length: RenderIdentity.length) }) {
                try? files.removeItem(at: data.render(id).url)
            }
        }
        var loaded: [String: StoredRender] = [:]
        for row in try await database.rows("SELECT record FROM renders", operation: "read the render index") {
            guard let json = row.column("record")?.string, let stored = try? JSONDecoder().decode(StoredRender.self, from: Data(json.utf8)),
                DataDirectory.validID(stored.manifest.id, length: RenderIdentity.length) != nil
            else { continue }
            loaded[stored.manifest.id] = stored
        }
        index.withLock { $0 = loaded }
        var result = Loaded()
        let accepted = try await database.rows("SELECT \(Pending.columns) FROM accepted ORDER BY created_at", operation: "read the accepted renders")
        for row in accepted {
            guard let id = row.column("id")?.string else { continue }
            guard let pending = Pending(row: row), DataDirectory.validID(id, length: RenderIdentity.length) != nil, loaded[id] == nil,
                pending.expiresAt > now
            else {
                try await database.rows("DELETE FROM accepted WHERE id = ?", [.text(id)], operation: "forget an accepted render")
                continue
            }
            if sharedQueue {
                // Accepted while this data folder ran without `--database`: the shared queue never had it.
                try await write(
                    StoredRender.failure(id: id, format: nil, createdAt: now, expiresAt: now + retention, error: StoredRender.interrupted))
                result.interrupted += 1
            } else {
                result.pending.append(pending)
            }
        }
        let pendingIDs = Set(result.pending.map(\.id))
        for id in folders where index.withLock({ $0[id] }) == nil {
            // Started but never finished: keep the fact (the job, or an earlier version's `job.json` marker), not the files.
            let folder = data.render(id).url
            let marked = files.fileExists(atPath: data.render(id).url(.runningMarker).path)
            if pendingIDs.contains(id) {
                for file in (try? files.contentsOfDirectory(atPath: folder.path)) ?? [] {
                    try? files.removeItem(at: folder.appendingPathComponent(file))
                }
                continue
            }
            // With a shared queue the render is not lost: another instance (or this one) takes it over. Otherwise the fact is
            // recorded before the marker goes.
            if marked && !sharedQueue {
                try await write(
                    StoredRender.failure(id: id, format: nil, createdAt: now, expiresAt: now + retention, error: StoredRender.interrupted))
                result.interrupted += 1
            }
            try? files.removeItem(at: folder)
        }
        return result
    }

    func get(_ id: String, now: Double = Date().timeIntervalSince1970) -> StoredRender? {
        index.withLock { records in
            guard let stored = records[id], stored.expiresAt > now else { return nil }
            return stored
        }
    }

    /// Records a finished render (its files are in place): the render is found from now on, and no longer run again
    /// after a restart.
    func save(_ stored: StoredRender) async throws {
        try await changes.run { try await self.write(stored) }
    }

    private func write(_ stored: StoredRender) async throws {
        let id = stored.manifest.id
        let json = String(decoding: try JSONEncoder().encode(stored), as: UTF8.self)
        try await database.rows(
            """
            INSERT INTO renders (id, status, record, created_at, expires_at) VALUES (?, ?, ?, ?, ?)
            ON CONFLICT (id) DO UPDATE SET status = excluded.status, record = excluded.record, expires_at = excluded.expires_at
            """, [.text(id), .text(stored.isDone ? "done" : "failed"), .text(json), .float(stored.createdAt), .float(stored.expiresAt)],
            operation: "record a render")
        index.withLock { $0[id] = stored }
        // Best effort: the record is what counts, and `load` drops a job that has one.
        _ = try? await database.rows("DELETE FROM accepted WHERE id = ?", [.text(id)], operation: "forget an accepted render")
    }

    /// Forgets render `id`'s acceptance (it was refused after all).
    func forgetAccepted(_ id: String) async throws {
        try await changes.run {
            try await self.database.rows("DELETE FROM accepted WHERE id = ?", [.text(id)], operation: "forget an accepted render")
        }
    }

    /// Records that render `id` was accepted, with the request that runs it, before the client hears so: a restart
    /// runs it again.
    func accept(id: String, caller: String, request: Data, createdAt: Double, expiresAt: Double) async throws {
        try await changes.run {
            try await self.database.rows(
                "INSERT OR REPLACE INTO accepted (id, caller, request, created_at, expires_at) VALUES (?, ?, ?, ?, ?)",
                [.text(id), .text(caller), .text(String(decoding: request, as: UTF8.self)), .float(createdAt), .float(expiresAt)],
                operation: "record an accepted render")
        }
    }

    /// Deletes a render: its record first (from then on it is not served, and a crash leaves only files the next start
    /// removes), then its files; returns whether it existed.
    @discardableResult
    func remove(_ id: String) async throws -> Bool {
        try await changes.run { try await self.removeSerially(id) }
    }

    /// Removes render `id` if its record is the one made at `createdAt` (any, if `nil`) and `isActive` says it is not
    /// being made again here — checked inside the serialized change, so nothing accepted meanwhile is touched. Returns
    /// whether it removed it.
    func remove(_ id: String, madeAt createdAt: Double?, isActive: @escaping @Sendable (String) async -> Bool) async throws -> Bool {
        try await changes.run {
            guard let stored = self.index.withLock({ $0[id] }), createdAt.map({ abs($0 - stored.createdAt) < 0.001 }) ?? true,
                await !isActive(id)
            else { return false }
            return try await self.removeSerially(id)
        }
    }

    private func removeSerially(_ id: String, expiredBy now: Double? = nil, isActive: (@Sendable (String) async -> Bool)? = nil) async throws -> Bool
    {
        let existed = index.withLock { $0[id] } != nil
        let removed: [SQLiteRow]
        if let now {
            removed = try await database.rows(
                "DELETE FROM renders WHERE id = ? AND expires_at <= ? RETURNING id", [.text(id), .float(now)],
                operation: "sweep", background: true)
        } else {
            removed = try await database.rows("DELETE FROM renders WHERE id = ? RETURNING id", [.text(id)], operation: "delete a render")
        }
        index.withLock { $0[id] = nil }
        // The folder too, unless the render is being made again (accepted under the same id: its job is recorded, or,
        // with a shared queue, it runs here).
        var remade = !(try await database.rows("SELECT id FROM accepted WHERE id = ?", [.text(id)], operation: "delete a render")).isEmpty
        if !remade, let isActive { remade = await isActive(id) }
        if !remade { try? FileManager.default.removeItem(at: data.render(id).url) }
        return existed || !removed.isEmpty
    }

    /// Deletes expired renders; returns their ids. One that `isActive` still holds (finishing, or being made again under
    /// its id) is left for a later sweep: deleting its record now would leave its folder behind for good.
    func sweep(now: Double = Date().timeIntervalSince1970, isActive: (@Sendable (String) async -> Bool)? = nil) async throws -> [String] {
        try await changes.run {
            var swept: [String] = []
            for id in self.index.withLock({ $0.filter { $0.value.expiresAt <= now }.map(\.key) }) {
                if let isActive, await isActive(id) { continue }
                _ = try await self.removeSerially(id, expiredBy: now, isActive: isActive)
                swept.append(id)
            }
            return swept
        }
    }

    /// Accepted renders with no record that `isActive` does not know: ones whose resumption at start failed for the
    /// service's reasons (disk, database), to be tried again.
    func unfinished(isActive: @Sendable (String) async -> Bool) async throws -> [Pending] {
        let rows = try await database.rows(
            """
            SELECT \(Pending.columns) FROM accepted WHERE id NOT IN (SELECT id FROM renders) ORDER BY created_at
            """, operation: "read the accepted renders")
        var pending: [Pending] = []
        for row in rows {
            guard let job = Pending(row: row), await !isActive(job.id) else { continue }
            pending.append(job)
        }
        return pending
    }

    var count: Int { index.withLock { $0.count } }

    /// Every render recorded here, with when it was made.
    var recorded: [(id: String, createdAt: Double)] { index.withLock { $0.map { ($0.key, $0.value.createdAt) } } }
}

/// Runs changes one at a time, in order, across their suspension points (an actor alone would interleave them).
actor SerialChanges {
    private var busy = false
    private var waiting: [CheckedContinuation<Void, Never>] = []

    @discardableResult
    func run<T: Sendable>(_ body: @Sendable () async throws -> T) async throws -> T {
        if busy {
            await withCheckedContinuation { waiting.append($0) }  // handed over by the one before, still busy
        } else {
            busy = true
        }
        defer {
            if waiting.isEmpty { busy = false } else { waiting.removeFirst().resume() }
        }
        return try await body()
    }
}
