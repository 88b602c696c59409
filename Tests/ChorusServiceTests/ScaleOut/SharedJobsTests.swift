import ChorusFixtures
import ChorusTestSupport
import ChorusWire
import Foundation
import Hummingbird
import HummingbirdTesting
import Logging
import NIOCore
import Testing

@testable import ChorusService

/// Two service instances sharing one PostgreSQL (a real server: a throwaway cluster the tests start) and one storage
/// folder: the job queue, the render index, limits across instances, and the database going away.
@Suite(
    "Service: shared jobs on PostgreSQL", .serialized,
    .enabled("needs PostgreSQL (apt-get install postgresql)") { await PostgresTestServer.shouldRun })
struct SharedJobsTests {
    static func server() async throws -> PostgresTestServer { try await PostgresTestServer.shared() }

    /// An instance on `database` and the shared folder, with the stub provider.
    static func instance(
        _ database: String, shared folder: TemporaryDirectory, stub: StubServer? = nil, workers: Int = 1,
        edit: (inout ServiceConfiguration) -> Void = { _ in }
    ) throws -> TestService {
        try TestService(stub: stub) { configuration in
            configuration.database = database
            configuration.storage = folder.file("shared").path
            configuration.workers = workers
            configuration.providerConcurrency = 1
            edit(&configuration)
        }
    }

    static func manifest(_ response: TestResponse) throws -> RenderManifest { try response.decode(RenderManifest.self) }

    /// Polls `id` through `client` until it is done (or `seconds` pass). A 503 or 429 with `Retry-After` (the database
    /// still reconnecting after an outage; the key's request limit, which a slow run's many polls can reach) is the
    /// service saying "ask again then": the poll waits that long and goes on.
    static func waitDone(_ client: any TestClientProtocol, _ id: String, seconds: Double = 60) async throws -> RenderManifest {
        let deadline = Date().addingTimeInterval(seconds)
        while true {
            let answer = try await client.call(.get, "/v1/renders/\(id)")
            if answer.status == .serviceUnavailable || answer.status == .tooManyRequests, Date() < deadline,
                let retryAfter = answer.headers[.retryAfter].flatMap(Double.init)
            {
                try await Task.sleep(nanoseconds: UInt64(max(0.2, min(retryAfter, 5)) * 1e9))
                continue
            }
            let manifest = try Self.manifest(answer)
            if manifest.status == .done || manifest.status == .failed || Date() > deadline { return manifest }
            try await Task.sleep(nanoseconds: 100_000_000)
        }
    }

    @Test("two instances starting at once migrate the schema once")
    func concurrentMigrations() async throws {
        try await withinTimeLimit(180, "concurrentMigrations") {
            let server = try await Self.server()
            let url = try await server.database("migrate")
            let folder = try TemporaryDirectory()
            let a = try Self.instance(url, shared: folder)
            let b = try Self.instance(url, shared: folder)
            async let first = a.server()
            async let second = b.server()
            _ = try await (first, second)
            #expect(
                try await server.psql(url, "SELECT string_agg(version::text, ',' ORDER BY version) FROM chorus_schema")
                    == PostgresDatabase.migrations.map { String($0.version) }.joined(separator: ","))
            #expect(try await server.psql(url, "SELECT count(*) FROM chorus_renders") == "0")
            // Started again: nothing to apply.
            _ = try await a.server()
            #expect(try await server.psql(url, "SELECT count(*) FROM chorus_schema") == String(PostgresDatabase.migrations.count))
        }
    }

    @Test("a lexicon stored through one instance is seen and used through the other; a render accepted with it keeps its entries")
    func lexiconsAcrossInstances() async throws {
        try await withinTimeLimit(180, "lexiconsAcrossInstances") {
            let server = try await Self.server()
            let url = try await server.database("lexicons")
            let folder = try TemporaryDirectory()
            let stub = try StubSpeech.openAIServer(latency: 0.3)
            let a = try Self.instance(url, shared: folder, stub: stub)
            let b = try Self.instance(url, shared: folder, stub: stub)
            try await a.test { clientA in
                try await b.test { clientB in
                    #expect(try await clientA.call(.put, "/v1/lexicons/family", json: #"{"entries": {"Nguyen": "win"}}"#).status == .created)
                    #expect(try await clientB.call(.get, "/v1/lexicons").decode(LexiconList.self).lexicons.map(\.name) == ["family"])
                    #expect(try await clientB.call(.put, "/v1/lexicons/family", json: #"{"entries": {"Nguyen": "win"}}"#).status == .ok)
                    let busy = try await clientA.call(
                        .post, "/v1/renders", json: textRequest((1...4).map { "Busy render, message \($0)." }, voice: "openai:nova"),
                        headers: [.init("Prefer")!: "respond-async"])
                    #expect(busy.status == .accepted, "\(busy.text)")
                    let named = #"{"messages": [{"speaker": "A", "text": "Ask Mrs Nguyen.", "voice": "openai:nova"}], "lexicon": "family"}"#
                    let queued = try await clientA.call(.post, "/v1/renders", json: named, headers: [.init("Prefer")!: "respond-async"])
                    #expect(queued.status == .accepted, "\(queued.text)")
                    // Deleted through B at once: the render accepted already carries the entries.
                    #expect(try await clientB.call(.delete, "/v1/lexicons/family").status == .noContent)
                    let done = try await Self.waitDone(clientB, try Self.manifest(queued).id)
                    #expect(done.status == .done && done.timeline?.segments[0].text == "Ask Mrs Nguyen.")
                    #expect(stub.requests.contains { $0.json?["input"] as? String == "Ask Mrs win." })
                    #expect(try await clientA.call(.get, "/v1/lexicons/family").status == .notFound)
                    #expect(try await server.psql(url, "SELECT count(*) FROM chorus_lexicons") == "0")
                    _ = try await Self.waitDone(clientA, try Self.manifest(busy).id)
                }
            }
        }
    }

    @Test("a render queued on A while A is busy runs on B; manifest, events and audio are the same through either; progress crosses")
    func queuedAcrossInstances() async throws {
        try await withinTimeLimit(180, "queuedAcrossInstances") {
            let server = try await Self.server()
            let url = try await server.database("queue")
            let folder = try TemporaryDirectory()
            let stub = try StubSpeech.openAIServer(latency: 0.4)
            let a = try Self.instance(url, shared: folder, stub: stub)
            let b = try Self.instance(url, shared: folder, stub: stub)
            let first = textRequest((1...6).map { "First render, message \($0)." }, voice: "openai:nova")
            let second = textRequest((1...6).map { "Second render, message \($0)." }, voice: "openai:nova")
            try await a.test { clientA in
                try await b.test { clientB in
                    let busy = try await clientA.call(.post, "/v1/renders", json: first, headers: [.init("Prefer")!: "respond-async"])
                    #expect(busy.status == .accepted, "\(busy.text)")
                    let queued = try await clientA.call(.post, "/v1/renders", json: second, headers: [.init("Prefer")!: "respond-async"])
                    #expect(queued.status == .accepted, "\(queued.text)")
                    let firstID = try Self.manifest(busy).id
                    let secondID = try Self.manifest(queued).id
                    // The second is B's (A's one worker is busy): two different owners while both run.
                    var owners = ""
                    for _ in 0..<100 {
                        owners = try await server.psql(url, "SELECT count(DISTINCT owner) FROM chorus_renders WHERE status = 'running'")
                        if owners == "2" { break }
                        try await Task.sleep(nanoseconds: 50_000_000)
                    }
                    #expect(owners == "2")
                    // Events through A of the render B runs: progress recorded by B, then the segments and done.
                    let events = try await clientA.call(.get, "/v1/renders/\(secondID)/events")
                    let names = events.text.split(separator: "\n").filter { $0.hasPrefix("event: ") }.map { String($0.dropFirst(7)) }
                    #expect(names.last == "done", "\(events.text)")
                    #expect(names.filter { $0 == "segment" }.count == 6)
                    #expect(names.filter { $0 == "progress" }.count >= 2, "progress from B while it ran, then the final one: \(names)")
                    for id in [firstID, secondID] {
                        let doneA = try await Self.waitDone(clientA, id)
                        let doneB = try await Self.waitDone(clientB, id)
                        #expect(doneA.status == .done && doneB.status == .done && doneA.duration == doneB.duration && doneA.samples == doneB.samples)
                        let audioA = try await clientA.call(.get, "/v1/renders/\(id)/audio")
                        let audioB = try await clientB.call(.get, "/v1/renders/\(id)/audio")
                        #expect(audioA.status == .ok && audioA.data.count > 10_000 && audioA.data == audioB.data)
                    }
                    #expect(try await server.psql(url, "SELECT string_agg(status || ':' || attempts, ',') FROM chorus_renders") == "done:1,done:1")
                }
            }
            // Twelve messages, twelve provider requests: nothing rendered twice.
            #expect(stub.requests.count == 12)
            // Callers are stored as digests, never as keys; no log line holds the database password or a key.
            #expect(try await server.psql(url, "SELECT count(*) FROM chorus_renders WHERE caller LIKE '%' || 'SECRET' || '%'") == "0")
            for service in [a, b] {
                #expect(!service.logs.text.contains(server.password) && !service.logs.text.contains(serviceKey))
            }
        }
    }

    @Test("the same request sent to A and B at the same moment renders once, and both callers get it")
    func sameRequestOnce() async throws {
        try await withinTimeLimit(180, "sameRequestOnce") {
            let server = try await Self.server()
            let url = try await server.database("dedupe")
            let folder = try TemporaryDirectory()
            let stub = try StubSpeech.openAIServer(latency: 0.3)
            let a = try Self.instance(url, shared: folder, stub: stub)
            let b = try Self.instance(url, shared: folder, stub: stub)
            let request = textRequest(["Both of you asked.", "Only one renders it."], voice: "openai:nova")
            try await a.test { clientA in
                try await b.test { clientB in
                    async let fromA = clientA.call(.post, "/v1/renders", json: request)
                    async let fromB = clientB.call(.post, "/v1/renders", json: request)
                    let (answerA, answerB) = try await (fromA, fromB)
                    #expect([answerA.status, answerB.status].allSatisfy { $0 == .created || $0 == .ok }, "\(answerA.text) \(answerB.text)")
                    let manifestA = try Self.manifest(answerA)
                    let manifestB = try Self.manifest(answerB)
                    #expect(
                        manifestA.id == manifestB.id && manifestA.status == .done && manifestB.status == .done
                            && manifestA.samples == manifestB.samples)
                }
            }
            #expect(stub.requests.count == 2)
            #expect(try await server.psql(url, "SELECT count(*) || ':' || max(attempts) FROM chorus_renders") == "1:1")
            let claims = (a.logs.lines + b.logs.lines).filter { $0.contains("render claimed") }.count
            #expect(claims == 1)
        }
    }

    @Test(
        "a render deleted through A is gone through B at once (B drops its copy on the notification); a copy whose notification was missed goes at B's sweep"
    )
    func deleteAcrossInstances() async throws {
        try await withinTimeLimit(180, "deleteAcrossInstances") {
            let server = try await Self.server()
            let url = try await server.database("delete")
            let folder = try TemporaryDirectory()
            let a = try Self.instance(url, shared: folder)
            let b = try Self.instance(url, shared: folder)
            let instanceB = try await b.server()
            let copies = b.configuration.dataDirectory.appendingPathComponent("renders")
            try await a.test { clientA in
                try await instanceB.application.test(.router) { clientB in
                    // Two renders made on A and played through B, which keeps copies of them.
                    var ids: [String] = []
                    for text in ["Deleted with a notification.", "Deleted behind the back of B."] {
                        let created = try await clientA.call(.post, "/v1/renders", json: textRequest([text], voice: "espeak:en"))
                        #expect(created.status == .created || created.status == .ok, "\(created.text)")
                        let id = try Self.manifest(created).id
                        let audio = try await clientB.call(.get, "/v1/renders/\(id)/audio")
                        #expect(audio.status == .ok)
                        #expect(FileManager.default.fileExists(atPath: copies.appendingPathComponent(id).path))
                        ids.append(id)
                    }
                    let deleted = try await clientA.call(.delete, "/v1/renders/\(ids[0])")
                    #expect(deleted.status == .noContent)
                    // B's manifest (which B's own copy answers until it is dropped) and B's folder, until both are gone.
                    var gone = false
                    for _ in 0..<100 where !gone {
                        try await Task.sleep(nanoseconds: 100_000_000)
                        gone =
                            try await clientB.call(.get, "/v1/renders/\(ids[0])").status == .notFound
                            && !FileManager.default.fileExists(atPath: copies.appendingPathComponent(ids[0]).path)
                    }
                    #expect(gone, "B still has the deleted render")
                    // The second one's row removed with no notification (as if B's listening connection were down then):
                    // B still has its copy until its sweep asks the database.
                    _ = try await server.psql(url, "DELETE FROM chorus_renders WHERE id = '\(ids[1])'")
                    let stillServed = try await clientB.call(.get, "/v1/renders/\(ids[1])/audio")
                    #expect(stillServed.status == .ok)
                    #expect(try await instanceB.state.catalog.evictDeleted() == 1)
                    let afterSweep = try await clientB.call(.get, "/v1/renders/\(ids[1])")
                    #expect(afterSweep.status == .notFound)
                    #expect(!FileManager.default.fileExists(atPath: copies.appendingPathComponent(ids[1]).path))
                }
            }
        }
    }

    @Test("renders per key are counted across instances")
    func perKeyAcrossInstances() async throws {
        try await withinTimeLimit(180, "perKeyAcrossInstances") {
            let server = try await Self.server()
            let url = try await server.database("limits")
            let folder = try TemporaryDirectory()
            let stub = try StubSpeech.openAIServer(latency: 0.5)
            let a = try Self.instance(url, shared: folder, stub: stub) { $0.rendersPerKey = 1 }
            let b = try Self.instance(url, shared: folder, stub: stub) { $0.rendersPerKey = 1 }
            try await a.test { clientA in
                try await b.test { clientB in
                    let running = try await clientA.call(
                        .post, "/v1/renders", json: textRequest(["One.", "Two."], voice: "openai:nova"),
                        headers: [.init("Prefer")!: "respond-async"])
                    #expect(running.status == .accepted)
                    let refused = try await clientB.call(
                        .post, "/v1/renders", json: textRequest(["Three.", "Four."], voice: "openai:nova"),
                        headers: [.init("Prefer")!: "respond-async"])
                    #expect(refused.status == .tooManyRequests && refused.errorCode == "too_many_renders" && refused.headers[.retryAfter] != nil)
                    _ = try await Self.waitDone(clientA, try Self.manifest(running).id)
                    let later = try await clientB.call(
                        .post, "/v1/renders", json: textRequest(["Three.", "Four."], voice: "openai:nova"),
                        headers: [.init("Prefer")!: "respond-async"])
                    #expect(later.status == .accepted)
                    _ = try await Self.waitDone(clientB, try Self.manifest(later).id)
                }
            }
        }
    }

    @Test("the per-minute request limit is counted in the database: four requests a minute across A and B, not four each")
    func rateLimitAcrossInstances() async throws {
        try await withinTimeLimit(180, "rateLimitAcrossInstances") {
            let server = try await Self.server()
            let url = try await server.database("rate")
            let folder = try TemporaryDirectory()
            let a = try Self.instance(url, shared: folder) { $0.rateLimitPerMinute = 4 }
            let b = try Self.instance(url, shared: folder) { $0.rateLimitPerMinute = 4 }
            let missing = "/v1/renders/" + String(repeating: "0", count: 32)
            try await a.test { clientA in
                try await b.test { clientB in
                    for index in 0..<4 {
                        let answer = try await (index % 2 == 0 ? clientA : clientB).call(.get, missing)
                        #expect(answer.status == .notFound, "request \(index): \(answer.status)")
                    }
                    for client in [clientA, clientB] {
                        let refused = try await client.call(.get, missing)
                        #expect(refused.status == .tooManyRequests && refused.errorCode == "rate_limited")
                        let wait = Int(refused.headers[.retryAfter] ?? "") ?? 0
                        #expect((1...15).contains(wait), "Retry-After \(wait)")
                    }
                }
            }
            #expect(try await server.psql(url, "SELECT count(*) FROM chorus_rate_limits WHERE caller LIKE '%SECRET%'") == "0")
            #expect(try await server.psql(url, "SELECT count(*) FROM chorus_rate_limits") == "1")
        }
    }

    @Test(
        "the database unreachable (packets dropped): 503 with Retry-After within seconds, finished renders still served, a running render still recorded, recovery on its own"
    )
    func databaseGoesAway() async throws {
        try await withinTimeLimit(180, "databaseGoesAway") {
            let server = try await Self.server()
            let url = try await server.database("outage")
            let proxy = try await TCPProxy.start(to: server.port)
            let proxied = url.replacingOccurrences(of: ":\(server.port)/", with: ":\(proxy.port)/")
            let folder = try TemporaryDirectory()
            let stub = try StubSpeech.openAIServer(latency: 0.4)
            // The outage lasts the refused request's deadlines (up to 12 s on a slow run) and 2 s more: with the default
            // 15 s lease the worker could rightly give the render up (⅔ of the lease without a renewal) and run it
            // again, which is not what this test is about ("done:1" below).
            let a = try Self.instance(proxied, shared: folder, stub: stub) { $0.leaseSeconds = 60 }
            try await a.test { client in
                let made = try await client.call(.post, "/v1/renders", json: textRequest(["Made before the outage."], voice: "openai:nova"))
                #expect(made.status == .created)
                let madeID = try Self.manifest(made).id
                // A render running when the database goes away for two seconds is still recorded done when it returns.
                let running = try await client.call(
                    .post, "/v1/renders", json: textRequest(["Running", "through", "the", "outage."], voice: "openai:nova"),
                    headers: [.init("Prefer")!: "respond-async"])
                #expect(running.status == .accepted)
                let runningID = try Self.manifest(running).id
                try await proxy.hang()  // nothing passes and nothing is closed: only the service's own deadlines end the wait
                let started = Date()
                let refused = try await client.call(.post, "/v1/renders", json: textRequest(["Sent during the outage."], voice: "openai:nova"))
                let waited = Date().timeIntervalSince(started)
                #expect(
                    refused.status == .serviceUnavailable && refused.errorCode == "database_unavailable" && refused.headers[.retryAfter] == "5",
                    "\(refused.status) \(refused.text)")
                #expect(waited < 12, "answered after \(waited) s")  // the request limit's deadline (3 s), then the database's (5 s)
                // What this instance finished is still served.
                #expect(try await client.call(.get, "/v1/renders/\(madeID)").status == .ok)
                #expect(try await client.call(.get, "/v1/renders/\(madeID)/audio").status == .ok)
                try await Task.sleep(nanoseconds: 2_000_000_000)
                try await proxy.up()
                var recovered: TestResponse?
                for _ in 0..<40 {
                    let answer = try await client.call(.post, "/v1/renders", json: textRequest(["Sent during the outage."], voice: "openai:nova"))
                    if answer.status == .created {
                        recovered = answer
                        break
                    }
                    try await Task.sleep(nanoseconds: 500_000_000)
                }
                #expect(recovered != nil, "no recovery within 20 s")
                let finished = try await Self.waitDone(client, runningID)
                let row = try await server.psql(url, "SELECT status || ':' || attempts FROM chorus_renders WHERE id = '\(runningID)'")
                #expect(
                    finished.status == .done && row == "done:1",
                    "\(finished.status) \(row)\n\(a.logs.lines.filter { !$0.contains("request") }.suffix(40).joined(separator: "\n"))")
            }
            #expect(!a.logs.text.contains(server.password))
        }
    }

    @Test("claims with SKIP LOCKED: four claimers on two pools take forty jobs, each exactly once")
    func claimsAreExclusive() async throws {
        try await withinTimeLimit(180, "claimsAreExclusive") {
            let server = try await Self.server()
            let url = try await server.database("claims")
            let logger = Logger(label: "test")
            let location = try DatabaseLocation(url: url)
            let pools = try [PostgresDatabase(location: location, logger: logger), PostgresDatabase(location: location, logger: logger)]
            try await withThrowingTaskGroup(of: Void.self) { group in
                for pool in pools { group.addTask { await pool.client.run() } }
                defer { group.cancelAll() }
                try await pools[0].migrate()
                let jobs = pools.enumerated().map { SharedQueue(database: $0.element, instance: "instance-\($0.offset)", lease: 15) }
                let now = Date().timeIntervalSince1970
                for index in 0..<40 {
                    let id = String(format: "%032x", index)
                    _ = try await jobs[index % 2].enqueue(
                        id: id, caller: "caller-\(index)", request: Data("{}".utf8), format: "mp3", createdAt: now,
                        expiresAt: now + 60, perCaller: 10, queueLimit: 1_000)
                }
                let claimed = try await withThrowingTaskGroup(of: [String].self) { claimers in
                    for claimer in 0..<4 {
                        claimers.addTask {
                            var mine: [String] = []
                            while let claim = try await jobs[claimer % 2].claim() {
                                mine.append(claim.job.id)
                                let record = StoredRender.failure(
                                    id: claim.job.id, format: "mp3", createdAt: now, expiresAt: now + 60,
                                    error: .init(code: "test", message: "done by the test"))
                                #expect(try await jobs[claimer % 2].complete(claim.job.id, record: record))
                            }
                            return mine
                        }
                    }
                    return try await claimers.reduce(into: []) { $0 += $1 }
                }
                #expect(claimed.count == 40 && Set(claimed).count == 40)
                #expect(try await server.psql(url, "SELECT count(*) FROM chorus_renders WHERE status = 'failed' AND attempts = 1") == "40")
            }
        }
    }

    @Test("a lease that runs out is claimed again, and the first owner can then neither renew nor complete it")
    func leaseTakeover() async throws {
        try await withinTimeLimit(180, "leaseTakeover") {
            let server = try await Self.server()
            let url = try await server.database("lease")
            let logger = Logger(label: "test")
            let database = try PostgresDatabase(location: try DatabaseLocation(url: url), logger: logger)
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { await database.client.run() }
                defer { group.cancelAll() }
                try await database.migrate()
                let first = SharedQueue(database: database, instance: "first", lease: 2)
                let second = SharedQueue(database: database, instance: "second", lease: 2)
                let now = Date().timeIntervalSince1970
                let id = String(repeating: "ab", count: 16)
                _ = try await first.enqueue(
                    id: id, caller: "c", request: Data("{}".utf8), format: "mp3", createdAt: now, expiresAt: now + 60, perCaller: 1,
                    queueLimit: 10)
                #expect(try await first.claim()?.job.id == id)
                #expect(try await second.claim() == nil)  // leased
                // Claimable again once the lease has run out (polled: the moment is the database's clock's).
                var taken: SharedQueue.Claim?
                for _ in 0..<100 where taken == nil {
                    try await Task.sleep(nanoseconds: 100_000_000)
                    taken = try await second.claim()
                }
                #expect(taken?.job.id == id && taken?.job.attempts == 2)
                #expect(try await first.renew(id, progress: nil) == false)
                let record = StoredRender.failure(id: id, format: "mp3", createdAt: now, expiresAt: now + 60, error: .init(code: "x", message: "y"))
                #expect(try await first.complete(id, record: record) == false)
                #expect(try await second.complete(id, record: record) == true)
                // A job whose instances keep dying is failed after three claims, not tried forever.
                let poison = String(repeating: "cd", count: 16)
                _ = try await first.enqueue(
                    id: poison, caller: "c", request: Data("{}".utf8), format: "mp3", createdAt: now, expiresAt: now + 60, perCaller: 5,
                    queueLimit: 10)
                #expect(try await first.claim()?.job.id == poison)
                for _ in 1..<SharedQueue.maxAttempts {
                    var again: SharedQueue.Claim?
                    for _ in 0..<100 where again == nil {
                        try await Task.sleep(nanoseconds: 100_000_000)
                        again = try await first.claim()
                    }
                    #expect(again?.job.id == poison)
                }
                // Past its last lease it is failed, not claimed a fourth time.
                var last: SharedQueue.Claim?
                for _ in 0..<30 where last == nil {
                    try await Task.sleep(nanoseconds: 100_000_000)
                    last = try await second.claim()
                }
                #expect(last == nil)
                #expect(try await second.entry(poison)?.status == .failed)
            }
        }
    }
}

@Suite("Database URL")
struct DatabaseLocationTests {
    @Test("postgres URLs: host, port, user, password, database and sslmode; the password never in a description or error")
    func parsing() throws {
        let location = try DatabaseLocation(url: "postgresql://app%40x:p%40ss-SECRET@db.example.com:6543/chorus?sslmode=require&application_name=x")
        #expect(location.host == "db.example.com" && location.port == 6543 && location.user == "app@x" && location.password == "p@ss-SECRET")
        #expect(location.database == "chorus" && location.sslMode == "require" && !location.description.contains("SECRET"))
        #expect(try DatabaseLocation(url: "postgres://u@localhost/d").sslMode == "prefer")
        #expect(try DatabaseLocation(url: "postgres://u@[::1]:5433/d").host == "::1")
        for mode in DatabaseLocation.sslModes {
            _ = try DatabaseLocation(url: "postgres://u:pw@h/d?sslmode=\(mode)").configuration(connectTimeout: 5, maximumConnections: 4)
        }
        for bad in [
            "mysql://u:SECRET@h/d", "postgres://u:SECRET@h", "postgres://:SECRET@h/d", "postgres://u:SECRET@h/d?sslmode=maybe",
            "postgres://u:SECRET@h:99999/d", "not a url SECRET",
        ] {
            #expect {
                try DatabaseLocation(url: bad)
            } throws: { error in
                let text = "\(error)"
                return text.hasPrefix("database ") && !text.contains("SECRET")
            }
        }
        #expect(
            DatabaseLocation.masked("postgres://u:SECRET@h/d?password=SECRET2") == "postgres://u:%E2%80%A6@h/d?password=%E2%80%A6"
                || !DatabaseLocation.masked("postgres://u:SECRET@h/d?password=SECRET2").contains("SECRET"))
    }

    @Test("--database needs --storage, and the lease has a range")
    func validation() throws {
        var configuration = try ServiceConfiguration(environment: ["CHORUS_DATABASE_URL": "postgres://u:SECRET@h/d", "CHORUS_LEASE": "15s"])
        #expect(throws: ConfigurationError.self) { try configuration.validate() }
        configuration.storage = "/tmp/chorus-shared"
        try configuration.validate()
        #expect(!configuration.description.contains("SECRET"))
        configuration.leaseSeconds = 1
        #expect(throws: ConfigurationError.self) { try configuration.validate() }
    }
}
