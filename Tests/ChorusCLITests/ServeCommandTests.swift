import ChorusAudio
import ChorusFixtures
import ChorusService
import ChorusTestSupport
import Foundation
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
#if canImport(Glibc)
import Glibc
#endif

/// `chorus serve` as a process: shutdown, restarts, crashes, one process per data folder, and jobs taken over between
/// two processes on one PostgreSQL.
@Suite("chorus serve")
struct ServeCommandTests {
    /// A free TCP port on loopback.
    static func freePort() throws -> Int {
        let server = try StubServer { _ in .json(200, [:]) }
        defer { server.stop() }
        return server.port
    }

    static func get(_ url: String, key: String) async -> (status: Int, body: Data)? {
        var request = URLRequest(url: URL(string: url)!)
        request.setValue("Bearer \(key)", forHTTPHeaderField: "Authorization")
        return await send(request)
    }

    static func post(_ url: String, key: String, json: String, async: Bool) async -> (status: Int, body: Data)? {
        var request = URLRequest(url: URL(string: url)!)
        request.httpMethod = "POST"
        request.httpBody = Data(json.utf8)
        request.setValue("Bearer \(key)", forHTTPHeaderField: "Authorization")
        if async { request.setValue("respond-async", forHTTPHeaderField: "Prefer") }
        return await send(request)
    }

    /// The status and body of `request`, or `nil` when no answer came within `timeout` seconds.
    static func send(_ request: URLRequest, timeout: Double = 30) async -> (status: Int, body: Data)? {
        var request = request
        request.timeoutInterval = timeout
        return await withCheckedContinuation { continuation in
            URLSession.shared.dataTask(with: request) { data, response, _ in
                guard let response = response as? HTTPURLResponse else { return continuation.resume(returning: nil) }
                continuation.resume(returning: (response.statusCode, data ?? Data()))
            }.resume()
        }
    }

    static let serveKey = "serve-test-key-0123456789"

    /// `chorus serve` on `<directory>/data` with the stub as its OpenAI, one provider request at a time; returns once
    /// it answers.
    static func serve(directory: URL, stub: StubServer, port: Int, rateLimit: Int = 0) async throws -> Process {
        var environment = ProcessInfo.processInfo.environment
        environment["CHORUS_API_KEYS"] = serveKey
        environment["OPENAI_API_KEY"] = "stub-key-0123456789"
        environment["OPENAI_BASE_URL"] = stub.baseURL + "/v1"
        return try await launch(
            [
                "--port", String(port), "--data-dir", directory.appendingPathComponent("data").path, "--concurrency", "1",
                "--rate-limit", String(rateLimit),
            ], environment: environment, port: port)
    }

    /// `chorus serve arguments` (which must include `--port port`) with `environment`, its output to `log` (else
    /// nowhere); returns once `/health` answers, or fails the test after 60 s or when it ends. Transcription is off unless
    /// `environment` sets `CHORUS_TRANSCRIPTION_MODEL` (loading Whisper takes a second of a core).
    static func launch(_ arguments: [String], environment: [String: String], port: Int, log: URL? = nil) async throws -> Process {
        let process = Process()
        process.executableURL = CLI.binary
        process.arguments = ["serve"] + arguments
        var environment = environment
        if environment["CHORUS_TRANSCRIPTION_MODEL"] == nil { environment["CHORUS_TRANSCRIPTION_MODEL"] = "off" }
        process.environment = environment
        if let log {
            _ = FileManager.default.createFile(atPath: log.path, contents: nil)
            process.standardOutput = try FileHandle(forWritingTo: log)
        } else {
            process.standardOutput = FileHandle.nullDevice
        }
        process.standardError = FileHandle.nullDevice
        try process.run()
        // Ready when /health answers; an AddressSanitizer build on a loaded two-core machine took over 10 s to start
        // (a restart test failed on that once), so it gets a minute — and a process that ends meanwhile fails at once.
        var ready = false
        var ended: ProcessEnd?
        for _ in 0..<600 where !ready && ended == nil {
            try await Task.sleep(nanoseconds: 100_000_000)
            ready = await get("http://127.0.0.1:\(port)/health", key: "")?.status == 200
            if !ready { ended = process.endIfEnded() }
        }
        if !ready && ended == nil { kill(process.processIdentifier, SIGKILL) }
        let why = ended.map { " (it ended: \($0))" } ?? ""
        try #require(ready, "the service did not start\(why)\(log.map { ": " + ((try? String(contentsOf: $0, encoding: .utf8)) ?? "") } ?? "")")
        return process
    }

    /// A new scratch folder, removed by the caller.
    static func scratch() throws -> URL {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("chorus-serve-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return directory
    }

    /// Sends three renders of two stub messages each (0.5 s per message, one at a time); returns their ids.
    static func submitThree(port: Int) async throws -> [String] {
        var ids: [String] = []
        for index in 0..<3 {
            let json =
                #"{"messages": [{"speaker": "A", "text": "Render \#(index), first.", "voice": "openai:nova"}, {"speaker": "B", "text": "Render \#(index), second.", "voice": "openai:nova"}]}"#
            let response = try #require(await post("http://127.0.0.1:\(port)/v1/renders", key: serveKey, json: json, async: true))
            #expect(response.status == 202)
            let manifest = try JSONSerialization.jsonObject(with: response.body) as! [String: Any]
            ids.append(manifest["id"] as! String)
        }
        return ids
    }

    /// The status recorded for render `id` in the data folder's database (read by Python's sqlite3, not by Chorus).
    static func recordedStatus(_ directory: URL, _ id: String) async throws -> String {
        let status = try await SQLiteReferee.query(
            directory.appendingPathComponent("data/chorus.sqlite"), "SELECT status FROM renders WHERE id = ?", [id])
        return status.isEmpty ? "none" : status
    }

    @Test("settings refused by the library are named by their flag; --help shows the library's defaults and variables")
    func flagsAndDefaults() async throws {
        let directory = FileManager.default.temporaryDirectory
        let idle = try await CLI.run(["serve", "--idle-timeout", "0.01s", "--data-dir", "/nonexistent/x"], in: directory)
        #expect(idle.status == 64 && idle.stderr.contains("--idle-timeout 0.01s: must be between 0.1 s and 3600 s"), "\(idle.stderr)")
        let redirect = try await CLI.run(["serve", "--redirect-audio"], in: directory)
        #expect(
            redirect.status == 64 && redirect.stderr.contains("--redirect-audio (no storage): needs --storage set to s3://bucket/prefix"),
            "\(redirect.stderr)")
        let body = try await CLI.run(["serve", "--max-body-mb", "0"], in: directory)
        #expect(body.status == 64 && body.stderr.contains("--max-body-mb"), "\(body.stderr)")
        let help = try await CLI.run(["serve", "--help"], in: directory)
        #expect(help.status == 0)
        let text = help.stdout.replacingOccurrences(of: "\n", with: " ").split(whereSeparator: \.isWhitespace).joined(separator: " ")
        let defaults = ServiceConfiguration.defaults
        let expected = [
            "Port. Default \(defaults.port) [\(ServiceConfiguration.Setting.port.environmentVariable)].",
            "0 for no limit. Default \(defaults.rateLimitPerMinute) [\(ServiceConfiguration.Setting.rateLimitPerMinute.environmentVariable)].",
            "Default \(defaults.queueLimit) [CHORUS_QUEUE].", "Default 24h [CHORUS_RETENTION].", "Default 15s [CHORUS_LEASE].",
        ]
        for fragment in expected { #expect(text.contains(fragment), "--help lacks \"\(fragment)\"") }
    }

    @Test("SIGTERM with renders in flight: they finish, the process exits 0, and the renders are stored")
    func gracefulShutdown() async throws {
        let directory = try Self.scratch()
        defer { try? FileManager.default.removeItem(at: directory) }
        let stub = try StubSpeech.openAIServer(latency: 0.5)
        let port = try Self.freePort()
        let process = try await Self.serve(directory: directory, stub: stub, port: port)
        defer { if process.isRunning { process.terminate() } }
        let ids = try await Self.submitThree(port: port)
        process.terminate()  // SIGTERM while six provider requests of 0.5 s are queued one at a time
        #expect(await process.exited() == .exited(0))
        for id in ids { #expect(try await Self.recordedStatus(directory, id) == "done", "render \(id)") }
    }

    @Test("a key's spent request limit stays spent across a restart (SIGTERM, then a new process)")
    func rateLimitAcrossRestart() async throws {
        let directory = try Self.scratch()
        defer { try? FileManager.default.removeItem(at: directory) }
        let stub = try StubSpeech.openAIServer(latency: 0)
        let port = try Self.freePort()
        let first = try await Self.serve(directory: directory, stub: stub, port: port, rateLimit: 1)
        defer { if first.isRunning { first.terminate() } }
        let voices = "http://127.0.0.1:\(port)/v1/voices"
        var spent: [Int] = []
        for _ in 0..<2 { spent.append(await Self.get(voices, key: Self.serveKey)?.status ?? 0) }
        #expect(spent == [200, 429])
        first.terminate()
        #expect(await first.exited() == .exited(0))
        // One key, one row, named by the key's digest id, never by the key.
        let callers = try await SQLiteReferee.query(directory.appendingPathComponent("data/chorus.sqlite"), "SELECT caller FROM rate_limits")
        #expect(callers.hasPrefix("key-") && !callers.contains("|") && !callers.contains(Self.serveKey), "\(callers)")
        let second = try await Self.serve(directory: directory, stub: stub, port: port, rateLimit: 1)
        defer { if second.isRunning { second.terminate() } }
        // 1 a minute: the next token 60 s after the first request, and the restart took less.
        #expect(await Self.get(voices, key: Self.serveKey)?.status == 429)
    }

    @Test("a key's spent request limit stays spent across a crash: kept every 10 s (kill -9 once kept, then a new process)")
    func rateLimitAcrossCrash() async throws {
        let directory = try Self.scratch()
        defer { try? FileManager.default.removeItem(at: directory) }
        let stub = try StubSpeech.openAIServer(latency: 0)
        let port = try Self.freePort()
        let first = try await Self.serve(directory: directory, stub: stub, port: port, rateLimit: 1)
        defer { if first.isRunning { kill(first.processIdentifier, SIGKILL) } }
        let voices = "http://127.0.0.1:\(port)/v1/voices"
        var spent: [Int] = []
        for _ in 0..<2 { spent.append(await Self.get(voices, key: Self.serveKey)?.status ?? 0) }
        #expect(spent == [200, 429])
        // Killed once the spent limit has been kept (every 10 s): waited for, not slept for.
        let database = directory.appendingPathComponent("data/chorus.sqlite")
        var kept = ""
        for _ in 0..<60 where kept.isEmpty {
            try await Task.sleep(nanoseconds: 500_000_000)
            kept = try await SQLiteReferee.query(database, "SELECT caller FROM rate_limits")
        }
        #expect(!kept.isEmpty, "the spent limit was not kept within 30 s")
        kill(first.processIdentifier, SIGKILL)
        await first.exited()
        let second = try await Self.serve(directory: directory, stub: stub, port: port, rateLimit: 1)
        defer { if second.isRunning { second.terminate() } }
        // 1 a minute: the next token 60 s after the first request.
        #expect(await Self.get(voices, key: Self.serveKey)?.status == 429)
    }

    @Test(
        "a second chorus serve on a data folder in use stops at start, naming the folder and the process holding it; after a kill -9 the folder is free again"
    )
    func oneProcessPerFolder() async throws {
        let directory = try Self.scratch()
        defer { try? FileManager.default.removeItem(at: directory) }
        let stub = try StubSpeech.openAIServer(latency: 0)
        let port = try Self.freePort()
        let first = try await Self.serve(directory: directory, stub: stub, port: port)
        defer { if first.isRunning { kill(first.processIdentifier, SIGKILL) } }
        let second = Process()
        second.executableURL = CLI.binary
        second.arguments = ["serve", "--port", String(try Self.freePort()), "--data-dir", directory.appendingPathComponent("data").path]
        var environment = ProcessInfo.processInfo.environment
        environment["CHORUS_API_KEYS"] = Self.serveKey
        second.environment = environment
        // Its errors to a file: a pipe's write end inherited by a process started meanwhile would hold its end back.
        let errorsFile = directory.appendingPathComponent("second.err")
        _ = FileManager.default.createFile(atPath: errorsFile.path, contents: nil)
        let errors = try FileHandle(forWritingTo: errorsFile)
        second.standardOutput = FileHandle.nullDevice
        second.standardError = errors
        try second.run()
        try errors.close()
        // A second process that does start (the defect) would run until stopped: it gets 20 s.
        var stopped = false
        for _ in 0..<200 where !stopped {
            stopped = second.endIfEnded() != nil
            if !stopped { try await Task.sleep(nanoseconds: 100_000_000) }
        }
        if !stopped { kill(second.processIdentifier, SIGKILL) }
        let secondEnd = await second.exited()
        let message = (try? String(contentsOf: errorsFile, encoding: .utf8)) ?? ""
        #expect(stopped && secondEnd.status != 0, "the second process started on the same folder")
        #expect(message.contains(directory.appendingPathComponent("data").path) && message.contains("pid \(first.processIdentifier)"), "\(message)")
        // The first one is unharmed, and once it is killed the folder can be served again.
        #expect(await Self.get("http://127.0.0.1:\(port)/v1/voices", key: Self.serveKey)?.status == 200)
        kill(first.processIdentifier, SIGKILL)
        await first.exited()
        let third = try await Self.serve(directory: directory, stub: stub, port: port)
        third.terminate()
        #expect(await third.exited() == .exited(0))
    }

    @Test("kill -9 with renders accepted: the restarted service runs them again, and each finishes once")
    func killedAndRestarted() async throws {
        let directory = try Self.scratch()
        defer { try? FileManager.default.removeItem(at: directory) }
        // The provider's answers are held until the first service is killed: it is killed with a request in flight
        // and nothing synthesized, however slow the machine.
        let hold = StubHold()
        let stub = try StubSpeech.openAIServer(latency: 0.5, hold: hold)
        defer { hold.release() }
        let port = try Self.freePort()
        let first = try await Self.serve(directory: directory, stub: stub, port: port)
        defer { if first.isRunning { kill(first.processIdentifier, SIGKILL) } }
        let ids = try await Self.submitThree(port: port)
        for _ in 0..<600 where stub.requests.isEmpty { try await Task.sleep(nanoseconds: 50_000_000) }
        #expect(!stub.requests.isEmpty, "the first service asked its provider nothing in 30 s")
        kill(first.processIdentifier, SIGKILL)
        await first.exited()
        let cutShort = stub.requests.count
        hold.release()
        for id in ids { #expect(try await Self.recordedStatus(directory, id) == "none", "render \(id) finished before the kill") }
        let second = try await Self.serve(directory: directory, stub: stub, port: port)
        defer { if second.isRunning { second.terminate() } }
        var statuses: [String] = []
        for _ in 0..<300 {
            statuses = []
            for id in ids {
                guard let response = await Self.get("http://127.0.0.1:\(port)/v1/renders/\(id)", key: Self.serveKey), response.status == 200,
                    let manifest = try? JSONSerialization.jsonObject(with: response.body) as? [String: Any]
                else {
                    statuses.append("?")
                    continue
                }
                statuses.append(manifest["status"] as? String ?? "?")
            }
            if statuses.allSatisfy({ $0 == "done" || $0 == "failed" }) { break }
            try await Task.sleep(nanoseconds: 100_000_000)
        }
        #expect(statuses == ["done", "done", "done"])
        for id in ids {
            let audio = try #require(await Self.get("http://127.0.0.1:\(port)/v1/renders/\(id)/audio", key: Self.serveKey))
            #expect(audio.status == 200 && audio.body.count > 1_000, "render \(id): \(audio.status), \(audio.body.count) bytes")
        }
        // Nothing was synthesized before the kill: the restarted service asks for all six messages, once each.
        #expect(stub.requests.count == cutShort + 6, "\(stub.requests.count) provider requests, \(cutShort) before the kill")
    }
}

/// Two `chorus serve` processes sharing one PostgreSQL (a real server) and one storage folder, with a 12 s lease: the
/// instance running a render dies (`kill -9`) or stalls (`SIGSTOP`) past its lease, and the other completes it. (A
/// 3 s lease, then a 6 s one, was taken over once too often under the whole suite's load — an instance's renewal
/// stalled 3.3 s, then over 6 s while the other CLI tests' processes ran Kokoro on both cores: the lease doing its
/// job, not what these tests are about. 12 s is near the service's default, 15 s.)
@Suite("chorus serve: jobs taken over", .serialized, .enabled("needs PostgreSQL (apt-get install postgresql)") { await PostgresTestServer.shouldRun })
struct TakeoverTests {
    static let key = "takeover-test-key-0123456789"
    /// The instances' lease, seconds.
    static let lease = 12.0

    struct Instance {
        let process: Process
        let port: Int
        let log: URL
    }

    static func start(database: String, directory: URL, name: String, stub: StubServer) async throws -> Instance {
        let port = try ServeCommandTests.freePort()
        var environment = ProcessInfo.processInfo.environment
        environment["CHORUS_API_KEYS"] = key
        environment["OPENAI_API_KEY"] = "stub-key-0123456789"
        environment["OPENAI_BASE_URL"] = stub.baseURL + "/v1"
        let log = directory.appendingPathComponent("\(name).log")
        let process = try await ServeCommandTests.launch(
            [
                "--port", String(port), "--data-dir", directory.appendingPathComponent(name).path,
                "--concurrency", "1", "--workers", "1", "--lease", "\(Int(lease))s", "--rate-limit", "0",
                "--storage", directory.appendingPathComponent("shared").path, "--database", database,
            ],
            environment: environment, port: port, log: log)
        return Instance(process: process, port: port, log: log)
    }

    static func manifest(_ instance: Instance, _ id: String) async -> [String: Any]? {
        guard let response = await ServeCommandTests.get("http://127.0.0.1:\(instance.port)/v1/renders/\(id)", key: key), response.status == 200
        else { return nil }
        return try? JSONSerialization.jsonObject(with: response.body) as? [String: Any]
    }

    /// Starts two instances, sends one a render of twelve messages (0.5 s each at the stub, one at a time), waits until
    /// the instance that claimed it (either may) has synthesized one, does `interrupt` to that one, and waits for the
    /// other to finish the render. Returns the render's id, the seconds from the interruption to done, and the
    /// instances: `a` the one interrupted, `b` the other.
    static func takeover(_ label: String, interrupt: (Instance) -> Void) async throws
        -> (id: String, seconds: Double, url: String, server: PostgresTestServer, a: Instance, b: Instance, directory: URL)
    {
        let server = try await PostgresTestServer.shared()
        let url = try await server.database(label)
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("chorus-takeover-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let stub = try StubSpeech.openAIServer(latency: 0.5)
        let first = try await start(database: url, directory: directory, name: "first", stub: stub)
        let second = try await start(database: url, directory: directory, name: "second", stub: stub)
        let messages = (1...12).map {
            #"{"speaker": "S\#($0 % 2)", "text": "Message \#($0) of a render that an instance leaves.", "voice": "openai:nova"}"#
        }
        let body = #"{"messages": [\#(messages.joined(separator: ","))]}"#
        let response = try #require(await ServeCommandTests.post("http://127.0.0.1:\(first.port)/v1/renders", key: key, json: body, async: true))
        #expect(response.status == 202)
        let id = try #require((try JSONSerialization.jsonObject(with: response.body) as? [String: Any])?["id"] as? String)
        // Started: its row records a synthesized message (read from the database: the instances' HTTP answers can be
        // slow when the whole suite loads the machine).
        var started = false
        for _ in 0..<600 where !started {
            try await Task.sleep(nanoseconds: 100_000_000)
            let synthesized = try await server.psql(
                url, "SELECT coalesce((progress::json->>'synthesized')::int, 0) FROM chorus_renders WHERE id = '\(id)' AND status = 'running'")
            started = (Int(synthesized) ?? 0) >= 1
        }
        #expect(started, "the render did not start")
        #expect(try await server.psql(url, "SELECT status || ':' || attempts FROM chorus_renders WHERE id = '\(id)'") == "running:1")
        // The instance running it says so in its log (written a quarter second at a time: looked for until it is there).
        var runner: Instance?
        for _ in 0..<50 where runner == nil {
            runner = [first, second].first { ((try? String(contentsOf: $0.log, encoding: .utf8)) ?? "").contains("render claimed") }
            if runner == nil { try await Task.sleep(nanoseconds: 100_000_000) }
        }
        let a = try #require(runner)
        let b = a.port == first.port ? second : first
        interrupt(a)
        let interrupted = Date()
        var done = false
        while !done && Date().timeIntervalSince(interrupted) < 90 {
            try await Task.sleep(nanoseconds: 200_000_000)
            done = await manifest(b, id)?["status"] as? String == "done"
        }
        #expect(done, "the other instance did not complete the render")
        return (id, Date().timeIntervalSince(interrupted), url, server, a, b, directory)
    }

    @Test("kill -9 of the instance running a render: the other takes it over once the lease runs out and completes it")
    func killed() async throws {
        let result = try await Self.takeover("killed") { kill($0.process.processIdentifier, SIGKILL) }
        defer {
            if result.b.process.isRunning { result.b.process.terminate() }
            try? FileManager.default.removeItem(at: result.directory)
        }
        // Not before the lease ran out; then within the render's own time (6 s) and a claim poll, with slack for a
        // loaded machine: under AddressSanitizer, beside the other CLI tests' processes (some load the Piper voice and
        // the Whisper model), the instance taking over once needed 38 s.
        #expect(result.seconds > Self.lease - 0.5 && result.seconds < 90, "taken over after \(result.seconds) s")
        let row = try await result.server.psql(result.url, "SELECT status || ':' || attempts FROM chorus_renders WHERE id = '\(result.id)'")
        #expect(
            row == "done:2",
            "\(row); A: \((try? String(contentsOf: result.a.log, encoding: .utf8)) ?? "") B: \((try? String(contentsOf: result.b.log, encoding: .utf8)) ?? "")"
        )
        let audio = result.directory.appendingPathComponent("shared/renders/\(result.id)/audio.mp3")
        let manifest = try #require(await Self.manifest(result.b, result.id))
        if Referee.available {
            let channels = manifest["channels"] as? Int ?? 1
            let frames = try await offCooperativeThreads { try Referee.decodedFrames(audio, channels: channels) }
            #expect(abs(frames - (manifest["samples"] as? Int ?? 0)) <= 1_152, "decoded \(frames) of \(manifest["samples"] ?? 0)")
        }
    }

    @Test("an instance stalled past its lease (SIGSTOP) loses the render to the other, and on waking neither renews nor completes it")
    func stalled() async throws {
        let result = try await Self.takeover("stalled") { kill($0.process.processIdentifier, SIGSTOP) }
        defer {
            for instance in [result.a, result.b] where instance.process.isRunning { kill(instance.process.processIdentifier, SIGKILL) }
            try? FileManager.default.removeItem(at: result.directory)
        }
        kill(result.a.process.processIdentifier, SIGCONT)
        var stopped = false
        for _ in 0..<150 where !stopped {  // its next renewal (a fraction of the lease), on a loaded machine
            try await Task.sleep(nanoseconds: 200_000_000)
            let log = (try? String(contentsOf: result.a.log, encoding: .utf8)) ?? ""
            stopped = log.contains("render stopped here") || log.contains("render finished after another instance took it over")
        }
        #expect(stopped, "A did not notice it had lost the render")
        #expect(
            try await result.server.psql(result.url, "SELECT status || ':' || attempts FROM chorus_renders WHERE id = '\(result.id)'") == "done:2")
        // Done once: B's record stands (A completed nothing).
        let log = (try? String(contentsOf: result.b.log, encoding: .utf8)) ?? ""
        #expect(log.contains("render claimed"))
    }
}
