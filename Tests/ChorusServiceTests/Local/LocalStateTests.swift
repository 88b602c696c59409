import ChorusAudio
import ChorusFixtures
import ChorusTestSupport
import ChorusWire
import Foundation
import Hummingbird
import HummingbirdTesting
import Logging
import Testing

@testable import ChorusService

#if canImport(Glibc)
import Glibc
#endif

/// The embedded state (no `--database`): SQLite in the data folder.
@Suite("Service: embedded state (SQLite in the data folder)")
struct LocalStateTests {
    static let logger = Logger(label: "local-state-test")

    /// The service's own view of `<data>/chorus.sqlite`, read by an outsider (`SQLiteReferee`).
    static func sql(_ data: URL, _ query: String) async throws -> String {
        try await SQLiteReferee.query(data.appendingPathComponent(LocalDatabase.fileName), query)
    }

    @Test("a render is recorded in chorus.sqlite, plays after a restart, and a DELETE removes row and files for good")
    func survivesRestart() async throws {
        let service = try TestService()
        let data = service.configuration.dataDirectory
        let id = try await service.test { client -> String in
            let response = try await client.call(.post, "/v1/renders", json: textRequest(["Kept across restarts."], voice: "espeak:en"))
            #expect(response.status == .created || response.status == .ok, "\(response.text)")
            return try response.decode(RenderManifest.self).id
        }
        #expect(try await Self.sql(data, "SELECT status FROM renders WHERE id = '\(id)'") == "done")
        #expect(try await Self.sql(data, "SELECT count(*) FROM accepted") == "0")
        // The waveform base is made by the render itself and recorded with it, before the answer.
        #expect(try await Self.sql(data, "SELECT count(*) FROM renders WHERE record LIKE '%waveformBase%'") == "1")
        #expect(!FileManager.default.fileExists(atPath: data.appendingPathComponent("renders/\(id)/render.json").path))
        try await service.test { client in
            let manifest = try await client.call(.get, "/v1/renders/\(id)").decode(RenderManifest.self)
            #expect(manifest.status == .done)
            let audio = try await client.call(.get, "/v1/renders/\(id)/audio")
            #expect(audio.status == .ok)
            #expect(try AudioFileReader(data: audio.data, name: "audio").readAll().frameCount == manifest.samples)
            #expect(try await client.call(.delete, "/v1/renders/\(id)").status == .noContent)
        }
        #expect(try await Self.sql(data, "SELECT count(*) FROM renders") == "0")
        #expect(!FileManager.default.fileExists(atPath: data.appendingPathComponent("renders/\(id)").path))
        let afterDelete = try await service.test { client in try await client.call(.get, "/v1/renders/\(id)").status }
        #expect(afterDelete == .notFound)
    }

    @Test("records of an earlier version (render.json files) move into the database once, and still play")
    func importsEarlierRecords() async throws {
        let service = try TestService()
        let data = service.configuration.dataDirectory
        let id = try await service.test { client -> String in
            try await client.call(.post, "/v1/renders", json: textRequest(["Written by an earlier version."], voice: "espeak:en"))
                .decode(RenderManifest.self).id
        }
        // As an earlier version left it: the record beside the files, no database.
        let record = try await Self.sql(data, "SELECT record FROM renders WHERE id = '\(id)'")
        #expect(record.contains(id))
        try Data(record.utf8).write(to: data.appendingPathComponent("renders/\(id)/render.json"))
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(at: data.appendingPathComponent(LocalDatabase.fileName + suffix)) }
        let (status, audio) = try await service.test { client in
            (
                try await client.call(.get, "/v1/renders/\(id)").decode(RenderManifest.self).status,
                try await client.call(.get, "/v1/renders/\(id)/audio").status
            )
        }
        #expect(status == .done && audio == .ok)
        #expect(try await Self.sql(data, "SELECT status FROM renders WHERE id = '\(id)'") == "done")
        #expect(!FileManager.default.fileExists(atPath: data.appendingPathComponent("renders/\(id)/render.json").path))
    }

    @Test("clips are indexed in chorus.sqlite (audio first, then the record); records of an earlier version move in once; orphaned audio is swept")
    func clipIndex() async throws {
        let service = try TestService()
        let data = service.configuration.dataDirectory
        let note = try await ClipAndVoiceRouteTests.voiceNote(seconds: 1)
        let id = try await service.test { client -> String in
            let created = try await client.call(.post, "/v1/clips", body: note)
            #expect(created.status == .created, "\(created.text)")
            return try created.decode(ClipInfo.self).id
        }
        #expect(try await Self.sql(data, "SELECT count(*) FROM clips WHERE id = '\(id)'") == "1")
        #expect(!FileManager.default.fileExists(atPath: data.appendingPathComponent("clips/\(id).json").path))
        // As an earlier version left it: the record beside the audio, no row; and an orphan (audio, no record) from
        // two minutes ago.
        let record = try await Self.sql(data, "SELECT record FROM clips WHERE id = '\(id)'")
        try Data(record.utf8).write(to: data.appendingPathComponent("clips/\(id).json"))
        _ = try await Self.sql(data, "DELETE FROM clips")
        let orphan = data.appendingPathComponent("clips/\(String(repeating: "e", count: 64)).audio")
        try note.write(to: orphan)
        try FileManager.default.setAttributes([.modificationDate: Date().addingTimeInterval(-120)], ofItemAtPath: orphan.path)
        let server = try await service.server()
        try await server.application.test(.router) { client in
            let render = try await client.call(
                .post, "/v1/renders", json: #"{"messages": [{"speaker": "Mom", "clip": "\#(id)"}], "output": {"format": "wav"}}"#)
            #expect(render.status == .created, "\(render.text)")
        }
        #expect(try await Self.sql(data, "SELECT count(*) FROM clips WHERE id = '\(id)'") == "1")
        #expect(!FileManager.default.fileExists(atPath: data.appendingPathComponent("clips/\(id).json").path))
        _ = try await server.state.clips.sweep()  // (the service's own sweep at start may have been first)
        #expect(!FileManager.default.fileExists(atPath: orphan.path))
        #expect(FileManager.default.fileExists(atPath: data.appendingPathComponent("clips/\(id).audio").path))
        // Expired: record and audio go.
        #expect(try await server.state.clips.sweep(now: Date().timeIntervalSince1970 + 10 * 86_400) == 1)
        #expect(try await Self.sql(data, "SELECT count(*) FROM clips") == "0")
        #expect(!FileManager.default.fileExists(atPath: data.appendingPathComponent("clips/\(id).audio").path))
    }

    @Test("a database of schema 1 (before clips) is migrated to the current schema, its renders and accepted renders kept")
    func migratesEarlierSchema() async throws {
        let directory = try TemporaryDirectory(prefix: "chorus-sqlite")
        // Schema 1 as the earlier build wrote it, with one row.
        _ = try await Self.sql(directory.url, "SELECT 1")  // creates the file
        for statement in [
            "CREATE TABLE renders (id TEXT PRIMARY KEY, status TEXT NOT NULL CHECK (status IN ('done', 'failed')), record TEXT NOT NULL, created_at REAL NOT NULL, expires_at REAL NOT NULL) WITHOUT ROWID",
            "CREATE TABLE jobs (id TEXT PRIMARY KEY, caller TEXT NOT NULL, request TEXT NOT NULL, created_at REAL NOT NULL, expires_at REAL NOT NULL) WITHOUT ROWID",
            "INSERT INTO renders VALUES ('r', 'failed', '{}', 1, 2)", "INSERT INTO jobs VALUES ('j', 'c', '{}', 1, 2)",
            "PRAGMA user_version = 1",
        ] {
            _ = try await Self.sql(directory.url, statement)
        }
        let database = try await LocalDatabase.open(in: directory.url, logger: Self.logger)
        #expect(try await database.rows("PRAGMA user_version").first?.column("user_version")?.integer == LocalDatabase.schemaVersion)
        #expect(try await Self.sql(directory.url, "SELECT count(*) FROM clips") == "0")
        #expect(try await Self.sql(directory.url, "SELECT id FROM renders") == "r")
        #expect(try await Self.sql(directory.url, "SELECT id FROM accepted") == "j")
    }

    @Test("the request limits' buckets not yet full are kept in chorus.sqlite and taken over by the next start; full or forgotten ones are not")
    func rateLimitsKept() async throws {
        let directory = try TemporaryDirectory(prefix: "chorus-sqlite")
        let now = 1_800_000_000.0
        let first = try await LocalDatabase.open(in: directory.url, logger: Self.logger)
        let before = RateLimiter(perMinute: 3)
        for _ in 0..<3 { #expect(before.take(for: "caller-spent", now: now) == nil) }
        #expect(before.take(for: "caller-spent", now: now) == 20)  // one token a 20 s
        #expect(before.take(for: "caller-one", now: now) == nil)
        #expect(before.take(for: "caller-full", now: now - 100) == nil)  // refilled by `now`
        try await LocalRateLimits(database: first, limiter: before).save(now: now)
        await first.close()
        #expect(try await Self.sql(directory.url, "SELECT caller, tokens FROM rate_limits ORDER BY caller") == "caller-one|2.0|caller-spent|0.0")

        // The next start: the spent caller waits out the same bucket, the others are as they were.
        let second = try await LocalDatabase.open(in: directory.url, logger: Self.logger)
        let after = RateLimiter(perMinute: 3)
        #expect(try await LocalRateLimits(database: second, limiter: after).load(now: now + 5) == 2)
        #expect(after.take(for: "caller-spent", now: now + 5) == 15)
        #expect(after.take(for: "caller-spent", now: now + 21) == nil)
        for _ in 0..<3 { #expect(after.take(for: "caller-full", now: now + 21) == nil) }
        // A bucket the new process already counts is not replaced by an older saved one.
        let busy = RateLimiter(perMinute: 3)
        #expect(busy.take(for: "caller-spent", now: now + 1) == nil)
        #expect(try await LocalRateLimits(database: second, limiter: busy).load(now: now + 1) == 2)
        #expect(busy.take(for: "caller-spent", now: now + 1) == nil)
        // Ten minutes on, every bucket is full again: nothing is read, and the rows go at the next save.
        let later = RateLimiter(perMinute: 3)
        #expect(try await LocalRateLimits(database: second, limiter: later).load(now: now + 700) == 0)
        try await LocalRateLimits(database: second, limiter: later).save(now: now + 700)
        #expect(try await Self.sql(directory.url, "SELECT count(*) FROM rate_limits") == "0")
        await second.close()
    }

    @Test("four openings of one data folder at the same moment migrate it once")
    func concurrentMigrations() async throws {
        let directory = try TemporaryDirectory(prefix: "chorus-sqlite")
        let folder = directory.url
        let versions = try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<4 {
                group.addTask {
                    let database = try await LocalDatabase.open(in: folder, logger: Self.logger)
                    return Int(try await database.rows("PRAGMA user_version").first?.column("user_version")?.integer ?? -1)
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(versions == Array(repeating: LocalDatabase.schemaVersion, count: 4))
        #expect(
            try await Self.sql(folder, "SELECT group_concat(name) FROM (SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name)")
                == "accepted,clips,lexicons,rate_limits,renders")
        #expect(try await Self.sql(folder, "PRAGMA journal_mode") == "wal")
    }

    @Test("an opening whose task cannot run (a busy process) does not hold the schema upgrade's write lock: a second opening beside it succeeds")
    func upgradeIndependentOfTheOpenersThread() async throws {
        let directory = try TemporaryDirectory(prefix: "chorus-sqlite")
        let folder = directory.url
        // The first opening runs on an executor that stops running anything the moment its upgrade has begun: as if every
        // thread of a loaded process were busy. Its upgrade must still end (and free the lock) without it.
        let gate = GatedExecutor()
        var logger = Logger(label: "gate") { _ in GateClosingLogHandler(gate: gate, message: "state upgrade started") }
        logger.logLevel = .debug
        let first = Task(executorPreference: gate) { try await LocalDatabase.open(in: folder, logger: logger) }
        try await gate.waitUntilClosed(timeout: 30)
        let second = try await LocalDatabase.open(in: folder, logger: Self.logger)
        #expect(try await second.rows("PRAGMA user_version").first?.column("user_version")?.integer == LocalDatabase.schemaVersion)
        gate.open()
        _ = try await first.value
        #expect(
            try await SQLiteReferee.query(folder.appendingPathComponent(LocalDatabase.fileName), "PRAGMA user_version")
                == "\(LocalDatabase.schemaVersion)")
    }

    @Test("a state file that is not a database, or is newer than this build, stops the start naming the file")
    func refusedStates() async throws {
        let directory = try TemporaryDirectory(prefix: "chorus-sqlite")
        let path = directory.url.appendingPathComponent(LocalDatabase.fileName)
        try Data(repeating: 0x41, count: 4096).write(to: path)
        do {
            _ = try await LocalDatabase.open(in: directory.url, logger: Self.logger)
            Issue.record("a file of A's opened as the state")
        } catch let error as ConfigurationError {
            #expect(error.value == path.path && error.setting == "dataDirectory", "\(error)")
        }
        #expect(try Data(contentsOf: path) == Data(repeating: 0x41, count: 4096), "the file was changed")

        try FileManager.default.removeItem(at: path)
        let database = try await LocalDatabase.open(in: directory.url, logger: Self.logger)
        try await database.rows("PRAGMA user_version = 99")
        do {
            _ = try await LocalDatabase.open(in: directory.url, logger: Self.logger)
            Issue.record("a newer schema was opened")
        } catch let error as ConfigurationError {
            #expect(error.description.contains("newer chorus (schema 99"), "\(error)")
        }
    }

    /// Starts another process that takes the write lock of `<folder>/chorus.sqlite` and holds it until it is killed;
    /// returns once it holds it.
    static func holdLock(in folder: URL) async throws -> Process {
        let holder = Process()
        holder.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        holder.arguments = [
            "python3", "-c",
            "import sqlite3, sys, time; c = sqlite3.connect(sys.argv[1], isolation_level=None); c.execute('BEGIN EXCLUSIVE'); print('locked', flush=True); time.sleep(600)",
            folder.appendingPathComponent(LocalDatabase.fileName).path,
        ]
        let output = Pipe()
        holder.standardOutput = output
        holder.standardError = FileHandle.nullDevice
        try holder.run()
        // "locked" (one read(2): Foundation's `availableData` waits for the end of the stream here), waited for on a
        // thread of its own.
        let descriptor = output.fileHandleForReading.fileDescriptor
        let said = try await offCooperativeThreads { () -> String in
            var buffer = [UInt8](repeating: 0, count: 16)
            let count = read(descriptor, &buffer, buffer.count)
            return count > 0 ? String(decoding: buffer.prefix(count), as: UTF8.self) : ""
        }
        guard said.hasPrefix("locked") else {
            release(holder)
            throw CocoaError(.fileLocking, userInfo: [NSLocalizedDescriptionKey: "the lock holder did not start"])
        }
        return holder
    }

    /// SIGKILL: a child of this process inherits SIGTERM ignored (the service lifecycle's signal handling).
    static func release(_ holder: Process) {
        kill(holder.processIdentifier, SIGKILL)
        _ = holder.waitForEnd()
    }

    @Test(
        "the database locked by another process: background writes queued ahead of a request's give up at once after the first wait, so the request waits behind at most one"
    )
    func backgroundGivesWay() async throws {
        let directory = try TemporaryDirectory(prefix: "chorus-sqlite")
        let database = try await LocalDatabase.open(in: directory.url, logger: Self.logger)
        try await database.rows("CREATE TABLE t (x)")
        let holder = try await Self.holdLock(in: directory.url)
        defer { Self.release(holder) }
        // Five background writes (each would wait out the busy timeout on the database's one thread), then a
        // request's. Counted, not timed: nothing else uses this database, so every wait is one of these.
        let background = (0..<5).map { _ in Task { try? await database.rows("INSERT INTO t VALUES (1)", operation: "keep", background: true) } }
        try await Task.sleep(nanoseconds: 200_000_000)
        do {
            try await database.rows("INSERT INTO t VALUES (2)", operation: "record")
            Issue.record("a write went through a lock another process holds")
        } catch let error as DatabaseError {
            #expect(error.kind == .unavailable && "\(error)".contains(LocalDatabase.fileName), "\(error)")
        }
        #expect(database.lockWaits <= 2, "the request waited behind \(database.lockWaits - 1) waits out of the busy timeout")
        for task in background { _ = await task.value }
        #expect(database.lockWaits == 2, "\(database.lockWaits) waits: one background write, the request; the other four give up at once")
        // Once the lock is gone, the request's writes go through (background ones try again in their next round).
        Self.release(holder)
        try await database.rows("INSERT INTO t VALUES (3)", operation: "record")
        #expect(try await SQLiteReferee.query(directory.url.appendingPathComponent(LocalDatabase.fileName), "SELECT group_concat(x) FROM t") == "3")
        await database.close()
    }

    @Test("the database locked by another process beyond the busy timeout is a 503 naming the file with Retry-After, never a hang")
    func lockedByAnotherProcess() async throws {
        let service = try TestService()
        let data = service.configuration.dataDirectory
        let server = try await service.server()
        let holder = try await Self.holdLock(in: data)
        defer { Self.release(holder) }
        let started = Date()
        try await server.application.test(.router) { client in
            let response = try await client.call(
                .post, "/v1/renders", json: textRequest(["Blocked by a lock."], voice: "espeak:en"),
                headers: [.init("Prefer")!: "respond-async"])
            #expect(response.status == .serviceUnavailable && response.errorCode == "database_unavailable", "\(response.status) \(response.text)")
            #expect(response.text.contains(LocalDatabase.fileName), "\(response.text)")
            #expect(response.headers[.retryAfter] != nil)
        }
        // The request waited out the busy timeout (5 s), and was answered: the bound is for a hang only (a loaded
        // machine under a sanitizer stretches everything; what may queue ahead is `backgroundGivesWay`'s to check).
        let seconds = Date().timeIntervalSince(started)
        #expect(seconds > 4 && seconds < 120, "answered after \(seconds) s")
    }
}

/// A task executor that runs jobs on its own queue until it is closed, and then holds them until it is opened again.
final class GatedExecutor: TaskExecutor, @unchecked Sendable {
    private let queue = DispatchQueue(label: "gated-executor")
    private let lock = NSLock()
    private var closed = false
    private var held: [UnownedJob] = []

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        lock.lock()
        if closed {
            held.append(job)
            lock.unlock()
            return
        }
        lock.unlock()
        queue.async { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
    }

    func close() { lock.withLock { closed = true } }

    func open() {
        let jobs = lock.withLock { () -> [UnownedJob] in
            closed = false
            defer { held = [] }
            return held
        }
        for job in jobs { queue.async { job.runSynchronously(on: self.asUnownedTaskExecutor()) } }
    }

    /// Waits (off the cooperative threads' work: polling with sleeps) until it has been closed.
    func waitUntilClosed(timeout: Double) async throws {
        let deadline = Date().addingTimeInterval(timeout)
        while !lock.withLock({ closed }) {
            guard Date() < deadline else { throw CancellationError() }
            try await Task.sleep(nanoseconds: 10_000_000)
        }
    }
}

/// Closes a `GatedExecutor` when a given message is logged.
struct GateClosingLogHandler: LogHandler {
    let gate: GatedExecutor
    let message: String
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .debug

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        if event.message.description == message { gate.close() }
    }
}
