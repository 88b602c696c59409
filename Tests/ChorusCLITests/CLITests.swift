import ChorusAudio
import ChorusFixtures
import ChorusTestSupport
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
#if canImport(Glibc)
import Glibc
#endif
import Testing

/// Runs the `chorus` binary built beside the tests.
struct CLI {
    /// The `chorus` of the same build as the running test executable (`.build/debug`, or `.build-asan/debug` for
    /// a sanitized run — never a binary of another build).
    static let binary: URL = {
        let tests = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")).map(URL.init(fileURLWithPath:))
        if let beside = tests?.deletingLastPathComponent().appendingPathComponent("chorus"), FileManager.default.isExecutableFile(atPath: beside.path) {
            return beside
        }
        var directory = URL(fileURLWithPath: #filePath)
        while directory.lastPathComponent != "Tests" { directory.deleteLastPathComponent() }
        return directory.deletingLastPathComponent().appendingPathComponent(".build/debug/chorus")
    }()

    struct Result {
        var status: Int32
        var stdout: String
        var stderr: String
    }

    static func run(_ arguments: [String], in directory: URL, environment: [String: String]? = nil) throws -> Result {
        let process = Process()
        process.executableURL = binary
        process.arguments = arguments
        if let environment { process.environment = environment }
        process.currentDirectoryURL = directory
        let out = Pipe()
        let err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        let stdout = out.fileHandleForReading.readDataToEndOfFile()
        let stderr = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Result(status: process.terminationStatus, stdout: String(decoding: stdout, as: UTF8.self),
                      stderr: String(decoding: stderr, as: UTF8.self))
    }
}

@Suite("The chorus command")
struct CLITests {
    let directory: URL

    init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("chorus-cli-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let format = AudioFormat(sampleRate: 22_050, channels: 1)
        for (index, encoding) in [ClipEncoding.mp3, .m4a].enumerated() {
            let voice = SignalGenerator.concatenate([
                SignalGenerator.silence(seconds: 0.2, format: format),
                SignalGenerator.speechLike(fundamental: 150 + 50 * Double(index), seconds: 1.2, format: format, seed: UInt64(index)),
                SignalGenerator.silence(seconds: 0.2, format: format),
            ])
            try encoding.write(voice, to: directory.appendingPathComponent("clip\(index).\(encoding.fileExtension)"))
        }
        try Data(#"{"messages": [{"speaker": "Sarah", "audio": "clip0.mp3", "text": "Hi"}, {"speaker": "Marcus", "audio": "clip1.m4a"}]}"#.utf8)
            .write(to: directory.appendingPathComponent("chat.json"))
    }

    func file(_ name: String) -> URL { directory.appendingPathComponent(name) }

    @Test("render writes audio, timeline, waveform and captions and says so")
    func render() throws {
        let result = try CLI.run(["render", "chat.json", "-o", "out.mp3", "--timeline", "out.json", "--waveform", "out.dat",
                                  "--bits", "8", "--captions", "out.vtt"], in: directory)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("Wrote out.mp3"))
        let timeline = try JSONSerialization.jsonObject(with: Data(contentsOf: file("out.json"))) as! [String: Any]
        let probe = try AudioProbe.probe(file("out.mp3"))
        #expect(timeline["samples"] as? Int == probe.samples)
        #expect(try Data(contentsOf: file("out.dat")).count > 20)
        #expect(try String(contentsOf: file("out.vtt"), encoding: .utf8).contains("<v Marcus>Marcus"))
    }

    @Test("render --chapters writes one chapter per message (ffprobe reads them); without it, none")
    func chapters() throws {
        try #require(Referee.available, "ffmpeg/ffprobe (the referee) is not installed")
        let result = try CLI.run(["render", "chat.json", "-o", "out.m4a", "--timeline", "out.json", "--chapters"], in: directory)
        #expect(result.status == 0, "\(result.stderr)")
        let chapters = try Referee.chapters(file("out.m4a"))
        #expect(chapters.map(\.title) == ["Sarah: Hi", "Marcus"])
        let timeline = try JSONSerialization.jsonObject(with: Data(contentsOf: file("out.json"))) as! [String: Any]
        let second = (timeline["segments"] as! [[String: Any]])[1]["start"] as! Double
        #expect(chapters.count == 2 && abs(chapters[1].start - second) <= 0.0005)
        #expect(try CLI.run(["render", "chat.json", "-o", "plain.m4a"], in: directory).status == 0)
        #expect(try Referee.chapters(file("plain.m4a")).isEmpty)
    }

    @Test("absurd parameters are usage errors (exit 64) naming the option", arguments: [
        (["--sample-rate", "0"], "--sample-rate 0"), (["--gap-ms", "-5"], "--gap-ms -5"), (["--channels", "3"], "--channels 3"),
        (["--loudness", "12"], "--loudness 12"), (["--bits", "12"], "--bits 12"), (["--samples-per-pixel", "1"], "--samples-per-pixel 1"),
    ])
    func absurd(arguments: [String], mention: String) throws {
        try Data("existing".utf8).write(to: file("out.mp3"))
        let result = try CLI.run(["render", "chat.json", "-o", "out.mp3"] + arguments, in: directory)
        #expect(result.status == 64)
        #expect(result.stderr.contains(mention), "\(result.stderr)")
        #expect(try String(contentsOf: file("out.mp3"), encoding: .utf8) == "existing")
    }

    @Test("a bad clip fails with exit 1, names the message and file, and leaves the existing output alone")
    func badClip() throws {
        try Data("not audio at all\n".utf8).write(to: file("broken.mp3"))
        try Data(#"{"messages": [{"speaker": "A", "audio": "clip0.mp3"}, {"speaker": "B", "audio": "broken.mp3"}]}"#.utf8)
            .write(to: file("bad.json"))
        try Data("existing".utf8).write(to: file("out.mp3"))
        let result = try CLI.run(["render", "bad.json", "-o", "out.mp3", "--timeline", "out.json"], in: directory)
        #expect(result.status == 1)
        #expect(result.stderr.hasPrefix("chorus: error: messages[1] (B): "))
        #expect(result.stderr.contains("broken.mp3"))
        #expect(!result.stderr.contains("Fatal") && !result.stderr.contains("Stack"))
        #expect(try String(contentsOf: file("out.mp3"), encoding: .utf8) == "existing")
        #expect(!FileManager.default.fileExists(atPath: file("out.json").path))
    }

    @Test("zero messages is an error naming the file")
    func zeroMessages() throws {
        try Data(#"{"messages": []}"#.utf8).write(to: file("empty.json"))
        let result = try CLI.run(["render", "empty.json", "-o", "out.wav"], in: directory)
        #expect(result.status == 1)
        #expect(result.stderr.contains("empty.json: has no messages"))
    }

    @Test("probe --json reports the exact decoded length")
    func probe() throws {
        let result = try CLI.run(["probe", "clip1.m4a", "--json"], in: directory)
        #expect(result.status == 0)
        let json = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as! [String: Any]
        #expect(json["codec"] as? String == "aac")
        #expect(json["samples"] as? Int == 35_280)
    }

    @Test("waveform writes audiowaveform JSON")
    func waveform() throws {
        let result = try CLI.run(["waveform", "clip0.mp3", "-o", "w.json", "--pixels-per-second", "50", "--bits", "8"], in: directory)
        #expect(result.status == 0, "\(result.stderr)")
        let json = try JSONSerialization.jsonObject(with: Data(contentsOf: file("w.json"))) as! [String: Any]
        #expect(json["samples_per_pixel"] as? Int == 441)
        #expect(json["bits"] as? Int == 8)
    }
}

@Suite("The chorus command with voices")
struct VoiceCLITests {
    let directory: URL

    init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("chorus-cli-voices-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try Data(#"{"messages": [{"speaker": "Ann", "text": "Practice moved to 4:30."}, {"speaker": "Ben", "text": "On my way."}]}"#.utf8)
            .write(to: directory.appendingPathComponent("text.json"))
    }

    @Test("a text conversation renders offline; the second render comes from the cache")
    func textRender() throws {
        let arguments = ["render", "text.json", "-o", "out.wav", "--timeline", "out.json", "--cache-dir", "cache"]
        let first = try CLI.run(arguments, in: directory)
        #expect(first.status == 0, "\(first.stderr)")
        #expect(first.stdout.contains("Voices: 2 synthesized, 0 from cache, 2 provider requests"))
        let second = try CLI.run(arguments, in: directory)
        #expect(second.stdout.contains("Voices: 2 synthesized, 2 from cache, 0 provider requests"), "\(second.stdout)")
        let timeline = try JSONSerialization.jsonObject(with: Data(contentsOf: directory.appendingPathComponent("out.json"))) as! [String: Any]
        let segments = timeline["segments"] as! [[String: Any]]
        #expect((segments[0]["voice"] as? String)?.hasPrefix("flite:") == true, "Flite speaks by default")
        #expect(segments[0]["voice"] as? String != segments[1]["voice"] as? String)
        #expect((segments[0]["words"] as? [[String: Any]])?.first?["word"] as? String == "Practice")
        // The espeak-ng defaults as before Flite.
        let espeak = try CLI.run(arguments + ["--voice-engine", "espeak"], in: directory)
        #expect(espeak.status == 0, "\(espeak.stderr)")
        let before = try JSONSerialization.jsonObject(with: Data(contentsOf: directory.appendingPathComponent("out.json"))) as! [String: Any]
        #expect(((before["segments"] as! [[String: Any]])[0]["voice"] as? String)?.hasPrefix("espeak:") == true)
        #expect(try CLI.run(arguments + ["--voice-engine", "festival"], in: directory).status == 64)
    }

    @Test("a missing key fails naming the message, provider and variable; a fallback voice saves the render")
    func missingKeyAndFallback() throws {
        try Data(#"{"voices": {"Ben": "openai:nova"}, "messages": [{"speaker": "Ann", "text": "Hi."}, {"speaker": "Ben", "text": "Hello."}]}"#.utf8)
            .write(to: directory.appendingPathComponent("keyed.json"))
        var environment = ProcessInfo.processInfo.environment
        environment["OPENAI_API_KEY"] = nil
        let failed = try CLI.run(["render", "keyed.json", "-o", "out.mp3", "--cache-dir", "cache"], in: directory, environment: environment)
        #expect(failed.status == 1)
        #expect(failed.stderr.contains("messages[1] (Ben, openai:nova): openai: not configured: OPENAI_API_KEY is not set"))
        #expect(!FileManager.default.fileExists(atPath: directory.appendingPathComponent("out.mp3").path))
        let saved = try CLI.run(["render", "keyed.json", "-o", "out.mp3", "--cache-dir", "cache", "--fallback-voice", "espeak:en-gb",
                                 "--timeline", "keyed.timeline.json"], in: directory, environment: environment)
        #expect(saved.status == 0, "\(saved.stderr)")
        #expect(try String(contentsOf: directory.appendingPathComponent("keyed.timeline.json"), encoding: .utf8).contains("\"fallback\": true"))
    }

    @Test("speak writes one message; voices lists the default voices")
    func speakAndVoices() throws {
        let spoken = try CLI.run(["speak", "Dinner at seven.", "--voice", "espeak:en-us+f3", "-o", "dinner.flac", "--cache-dir", "cache"], in: directory)
        #expect(spoken.status == 0, "\(spoken.stderr)")
        #expect(FileManager.default.fileExists(atPath: directory.appendingPathComponent("dinner.flac").path))
        let voices = try CLI.run(["voices", "--provider", "espeak", "--json"], in: directory)
        #expect(voices.status == 0)
        let list = try JSONSerialization.jsonObject(with: Data(voices.stdout.utf8)) as! [[String: String]]
        #expect(list.count > 20)
        #expect(list.first?["id"] == "espeak:en-us+m3?pitch=38&rate=165")
    }

    @Test("player writes one page that plays from any folder with no network; bad inputs name the file and write nothing")
    func player() throws {
        let rendered = try CLI.run(["render", "text.json", "-o", "out.ogg", "--timeline", "out.json", "--waveform", "out.dat", "--cache-dir", "cache"],
                                   in: directory)
        #expect(rendered.status == 0, "\(rendered.stderr)")
        let made = try CLI.run(["player", "out.ogg", "--timeline", "out.json", "-o", "page.html", "--title", "Practice"], in: directory)
        #expect(made.status == 0, "\(made.stderr)")
        let elsewhere = directory.appendingPathComponent("moved/page.html")
        try FileManager.default.createDirectory(at: elsewhere.deletingLastPathComponent(), withIntermediateDirectories: true)
        try FileManager.default.moveItem(at: directory.appendingPathComponent("page.html"), to: elsewhere)
        let report = try BrowserReferee.check(url: elsewhere.absoluteString, timeline: directory.appendingPathComponent("out.json"))
        #expect(report.resources == 0, "everything is inside the page")
        #expect(report.speakersSeen == ["Ann", "Ben"] && report.wordsSeen == 2)
        #expect(try String(contentsOf: elsewhere, encoding: .utf8).contains("<title>Practice</title>"))
        // Peaks given as a file instead of computed.
        #expect(try CLI.run(["player", "out.ogg", "--timeline", "out.json", "--waveform", "out.dat", "-o", "peaks.html"], in: directory).status == 0)

        // A timeline that is not this audio's, a missing file, audio that is not audio, a page name that is not .html.
        #expect(try CLI.run(["speak", "Hi.", "--voice", "flite:slt", "-o", "short.wav", "--cache-dir", "cache"], in: directory).status == 0)
        let mismatch = try CLI.run(["player", "short.wav", "--timeline", "out.json", "-o", "bad.html"], in: directory)
        #expect(mismatch.status == 1 && mismatch.stderr.contains("out.json") && mismatch.stderr.contains("not this audio's timeline"), "\(mismatch.stderr)")
        let missing = try CLI.run(["player", "out.ogg", "--timeline", "nothing.json", "-o", "bad.html"], in: directory)
        #expect(missing.status == 1 && missing.stderr.contains("nothing.json: no such timeline JSON file"), "\(missing.stderr)")
        let notAudio = try CLI.run(["player", "out.json", "--timeline", "out.json", "-o", "bad.html"], in: directory)
        #expect(notAudio.status == 1 && notAudio.stderr.contains("is not MP3, WAV, FLAC, AIFF, M4A or Ogg audio"), "\(notAudio.stderr)")
        let notTimeline = try CLI.run(["player", "out.ogg", "--timeline", "text.json", "-o", "bad.html"], in: directory)
        #expect(notTimeline.status == 1 && notTimeline.stderr.contains("text.json: is not a timeline JSON file"), "\(notTimeline.stderr)")
        #expect(try CLI.run(["player", "out.ogg", "--timeline", "out.json", "-o", "page.mp3"], in: directory).status == 64)
        #expect(!FileManager.default.fileExists(atPath: directory.appendingPathComponent("bad.html").path))
    }

    @Test("bad voice options are usage errors", arguments: [
        ["speak", "Hi", "--voice", "nova", "-o", "x.mp3"], ["voices", "--provider", "acme"],
        ["render", "text.json", "-o", "x.mp3", "--fallback-voice", "espeak"], ["render", "text.json", "-o", "x.mp3", "--concurrency", "0"],
    ])
    func badOptions(arguments: [String]) throws {
        let result = try CLI.run(arguments, in: directory)
        #expect(result.status == 64, "\(arguments): \(result.stderr)")
    }
}

@Suite("Interrupting the chorus command")
struct InterruptTests {
    @Test("Ctrl-C during a render leaves no partial file and keeps the existing output")
    func interrupt() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("chorus-cli-int-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let synthetic = try SyntheticConversation.write(messages: 400, in: directory, poolSize: 3)
        try Data("existing".utf8).write(to: directory.appendingPathComponent("out.mp3"))
        let process = Process()
        process.executableURL = CLI.binary
        process.arguments = ["render", synthetic.conversationURL.path, "-o", "out.mp3", "--timeline", "out.json"]
        process.currentDirectoryURL = directory
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        Thread.sleep(forTimeInterval: 1.5)
        process.interrupt()
        process.waitUntilExit()
        #expect(process.terminationStatus == 130)
        let names = try FileManager.default.contentsOfDirectory(atPath: directory.path)
        #expect(!names.contains { $0.hasSuffix(".partial") }, "\(names)")
        #expect(!names.contains("out.json"))
        #expect(try String(contentsOf: directory.appendingPathComponent("out.mp3"), encoding: .utf8) == "existing")
    }
}

@Suite("chorus serve")
struct ServeCommandTests {
    /// A free TCP port on loopback.
    static func freePort() throws -> Int {
        let server = try StubServer { _ in .json(200, [:]) }
        defer { server.stop() }
        return server.port
    }

    static func get(_ url: String, key: String) -> (status: Int, body: Data)? {
        var request = URLRequest(url: URL(string: url)!)
        request.setValue("Bearer \(key)", forHTTPHeaderField: "Authorization")
        let result = ResultBox()
        URLSession.shared.dataTask(with: request) { data, response, _ in
            result.set(((response as? HTTPURLResponse)?.statusCode ?? 0, data ?? Data()))
        }.resume()
        return result.wait(seconds: 30)
    }

    static func post(_ url: String, key: String, json: String, async: Bool) -> (status: Int, body: Data)? {
        var request = URLRequest(url: URL(string: url)!)
        request.httpMethod = "POST"
        request.httpBody = Data(json.utf8)
        request.setValue("Bearer \(key)", forHTTPHeaderField: "Authorization")
        if async { request.setValue("respond-async", forHTTPHeaderField: "Prefer") }
        let result = ResultBox()
        URLSession.shared.dataTask(with: request) { data, response, _ in
            result.set(((response as? HTTPURLResponse)?.statusCode ?? 0, data ?? Data()))
        }.resume()
        return result.wait(seconds: 30)
    }

    static let serveKey = "serve-test-key-0123456789"

    /// `chorus serve` on `<directory>/data` with the stub as its OpenAI, one provider request at a time; returns once
    /// it answers.
    static func serve(directory: URL, stub: StubServer, port: Int, rateLimit: Int = 0) throws -> Process {
        let process = Process()
        process.executableURL = CLI.binary
        process.arguments = ["serve", "--port", String(port), "--data-dir", directory.appendingPathComponent("data").path, "--concurrency", "1",
                             "--rate-limit", String(rateLimit)]
        var environment = ProcessInfo.processInfo.environment
        environment["CHORUS_API_KEYS"] = serveKey
        environment["OPENAI_API_KEY"] = "stub-key-0123456789"
        environment["OPENAI_BASE_URL"] = stub.baseURL + "/v1"
        process.environment = environment
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        var ready = false
        for _ in 0..<100 where !ready {
            Thread.sleep(forTimeInterval: 0.1)
            ready = get("http://127.0.0.1:\(port)/health", key: serveKey)?.status == 200
        }
        if !ready { process.terminate() }
        try #require(ready, "the service did not start")
        return process
    }

    /// Sends three renders of two stub messages each (0.5 s per message, one at a time); returns their ids.
    static func submitThree(port: Int) throws -> [String] {
        var ids: [String] = []
        for index in 0..<3 {
            let json = #"{"messages": [{"speaker": "A", "text": "Render \#(index), first.", "voice": "openai:nova"}, {"speaker": "B", "text": "Render \#(index), second.", "voice": "openai:nova"}]}"#
            let response = try #require(post("http://127.0.0.1:\(port)/v1/renders", key: serveKey, json: json, async: true))
            #expect(response.status == 202)
            let manifest = try JSONSerialization.jsonObject(with: response.body) as! [String: Any]
            ids.append(manifest["id"] as! String)
        }
        return ids
    }

    /// The status recorded for render `id` in the data folder's database (read by Python's sqlite3, not by Chorus).
    static func recordedStatus(_ directory: URL, _ id: String) throws -> String {
        let status = try SQLiteReferee.query(directory.appendingPathComponent("data/chorus.sqlite"), "SELECT status FROM renders WHERE id = ?", [id])
        return status.isEmpty ? "none" : status
    }

    @Test("SIGTERM with renders in flight: they finish, the process exits 0, and the renders are stored")
    func gracefulShutdown() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("chorus-serve-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let stub = try StubSpeech.openAIServer(latency: 0.5)
        let port = try Self.freePort()
        let process = try Self.serve(directory: directory, stub: stub, port: port)
        defer { if process.isRunning { process.terminate() } }
        let ids = try Self.submitThree(port: port)
        process.terminate()   // SIGTERM while six provider requests of 0.5 s are queued one at a time
        process.waitUntilExit()
        #expect(process.terminationReason == .exit && process.terminationStatus == 0)
        for id in ids { #expect(try Self.recordedStatus(directory, id) == "done", "render \(id)") }
    }

    @Test("a key's spent request limit stays spent across a restart (SIGTERM, then a new process)")
    func rateLimitAcrossRestart() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("chorus-serve-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let stub = try StubSpeech.openAIServer(latency: 0)
        let port = try Self.freePort()
        let first = try Self.serve(directory: directory, stub: stub, port: port, rateLimit: 1)
        defer { if first.isRunning { first.terminate() } }
        let voices = "http://127.0.0.1:\(port)/v1/voices"
        let spent = (0..<2).map { _ in Self.get(voices, key: Self.serveKey)?.status ?? 0 }
        #expect(spent == [200, 429])
        first.terminate()
        first.waitUntilExit()
        #expect(first.terminationReason == .exit && first.terminationStatus == 0)
        // One key, one row, named by the key's digest id, never by the key.
        let callers = try SQLiteReferee.query(directory.appendingPathComponent("data/chorus.sqlite"), "SELECT caller FROM rate_limits")
        #expect(callers.hasPrefix("key-") && !callers.contains("|") && !callers.contains(Self.serveKey), "\(callers)")
        let second = try Self.serve(directory: directory, stub: stub, port: port, rateLimit: 1)
        defer { if second.isRunning { second.terminate() } }
        // 1 a minute: the next token 60 s after the first request, and the restart took less.
        #expect(Self.get(voices, key: Self.serveKey)?.status == 429)
    }

    @Test("a key's spent request limit stays spent across a crash: kept every 10 s (kill -9 after 11 s, then a new process)")
    func rateLimitAcrossCrash() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("chorus-serve-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let stub = try StubSpeech.openAIServer(latency: 0)
        let port = try Self.freePort()
        let first = try Self.serve(directory: directory, stub: stub, port: port, rateLimit: 1)
        defer { if first.isRunning { kill(first.processIdentifier, SIGKILL) } }
        let voices = "http://127.0.0.1:\(port)/v1/voices"
        #expect((0..<2).map { _ in Self.get(voices, key: Self.serveKey)?.status ?? 0 } == [200, 429])
        Thread.sleep(forTimeInterval: 11)
        kill(first.processIdentifier, SIGKILL)
        first.waitUntilExit()
        let second = try Self.serve(directory: directory, stub: stub, port: port, rateLimit: 1)
        defer { if second.isRunning { second.terminate() } }
        // 1 a minute: the next token 60 s after the first request.
        #expect(Self.get(voices, key: Self.serveKey)?.status == 429)
    }

    @Test("a second chorus serve on a data folder in use stops at start, naming the folder and the process holding it; after a kill -9 the folder is free again")
    func oneProcessPerFolder() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("chorus-serve-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let stub = try StubSpeech.openAIServer(latency: 0)
        let port = try Self.freePort()
        let first = try Self.serve(directory: directory, stub: stub, port: port)
        defer { if first.isRunning { kill(first.processIdentifier, SIGKILL) } }
        let second = Process()
        second.executableURL = CLI.binary
        second.arguments = ["serve", "--port", String(try Self.freePort()), "--data-dir", directory.appendingPathComponent("data").path]
        var environment = ProcessInfo.processInfo.environment
        environment["CHORUS_API_KEYS"] = Self.serveKey
        second.environment = environment
        let errors = Pipe()
        second.standardOutput = FileHandle.nullDevice
        second.standardError = errors
        try second.run()
        // A second process that does start (the defect) would run until stopped: it gets 20 s.
        var stopped = false
        for _ in 0..<200 where !stopped {
            stopped = !second.isRunning
            if !stopped { Thread.sleep(forTimeInterval: 0.1) }
        }
        if !stopped { kill(second.processIdentifier, SIGKILL) }
        second.waitUntilExit()
        let message = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(stopped && second.terminationStatus != 0, "the second process started on the same folder")
        #expect(message.contains(directory.appendingPathComponent("data").path) && message.contains("pid \(first.processIdentifier)"), "\(message)")
        // The first one is unharmed, and once it is killed the folder can be served again.
        #expect(Self.get("http://127.0.0.1:\(port)/v1/voices", key: Self.serveKey)?.status == 200)
        kill(first.processIdentifier, SIGKILL)
        first.waitUntilExit()
        let third = try Self.serve(directory: directory, stub: stub, port: port)
        third.terminate()
        third.waitUntilExit()
        #expect(third.terminationStatus == 0)
    }

    @Test("kill -9 with renders accepted: the restarted service runs them again, and each finishes once")
    func killedAndRestarted() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("chorus-serve-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let stub = try StubSpeech.openAIServer(latency: 0.5)
        let port = try Self.freePort()
        let first = try Self.serve(directory: directory, stub: stub, port: port)
        defer { if first.isRunning { kill(first.processIdentifier, SIGKILL) } }
        let ids = try Self.submitThree(port: port)
        kill(first.processIdentifier, SIGKILL)   // at most one of six 0.5 s requests has been answered
        first.waitUntilExit()
        // Six 0.5 s requests one at a time: the last render cannot have finished (the first may have, on a slow machine).
        #expect(try Self.recordedStatus(directory, ids[2]) == "none", "the last render finished before the kill")
        let second = try Self.serve(directory: directory, stub: stub, port: port)
        defer { if second.isRunning { second.terminate() } }
        var statuses: [String] = []
        for _ in 0..<300 {
            statuses = ids.map { id in
                guard let response = Self.get("http://127.0.0.1:\(port)/v1/renders/\(id)", key: Self.serveKey), response.status == 200,
                      let manifest = try? JSONSerialization.jsonObject(with: response.body) as? [String: Any] else { return "?" }
                return manifest["status"] as? String ?? "?"
            }
            if statuses.allSatisfy({ $0 == "done" || $0 == "failed" }) { break }
            Thread.sleep(forTimeInterval: 0.1)
        }
        #expect(statuses == ["done", "done", "done"])
        for id in ids {
            let audio = try #require(Self.get("http://127.0.0.1:\(port)/v1/renders/\(id)/audio", key: Self.serveKey))
            #expect(audio.status == 200 && audio.body.count > 1_000, "render \(id): \(audio.status), \(audio.body.count) bytes")
        }
        // Six messages; what was synthesized before the kill is in the cache, so at most the one cut short twice.
        #expect((6...7).contains(stub.requests.count), "\(stub.requests.count) provider requests")
    }
}

/// Two `chorus serve` processes sharing one PostgreSQL (a real server) and one storage folder, with a 3 s lease: the
/// instance running a render dies (`kill -9`) or stalls (`SIGSTOP`) past its lease, and the other completes it.
@Suite("chorus serve: jobs taken over", .serialized, .enabled(if: PostgresTestServer.shouldRun, "needs PostgreSQL (apt-get install postgresql)"))
struct TakeoverTests {
    static let key = "takeover-test-key-0123456789"

    struct Instance {
        let process: Process
        let port: Int
        let log: URL
    }

    static func start(database: String, directory: URL, name: String, stub: StubServer) async throws -> Instance {
        let port = try ServeCommandTests.freePort()
        let process = Process()
        process.executableURL = CLI.binary
        process.arguments = ["serve", "--port", String(port), "--data-dir", directory.appendingPathComponent(name).path, "--concurrency", "1",
                             "--workers", "1", "--lease", "3s", "--rate-limit", "0", "--storage", directory.appendingPathComponent("shared").path, "--database", database]
        var environment = ProcessInfo.processInfo.environment
        environment["CHORUS_API_KEYS"] = key
        environment["OPENAI_API_KEY"] = "stub-key-0123456789"
        environment["OPENAI_BASE_URL"] = stub.baseURL + "/v1"
        process.environment = environment
        let log = directory.appendingPathComponent("\(name).log")
        FileManager.default.createFile(atPath: log.path, contents: nil)
        process.standardOutput = try FileHandle(forWritingTo: log)
        process.standardError = FileHandle.nullDevice
        try process.run()
        var ready = false
        for _ in 0..<100 where !ready {
            try await Task.sleep(nanoseconds: 100_000_000)
            ready = await offPool { ServeCommandTests.get("http://127.0.0.1:\(port)/health", key: key)?.status == 200 }
        }
        try #require(ready, "instance \(name) did not start: \((try? String(contentsOf: log, encoding: .utf8)) ?? "")")
        return Instance(process: process, port: port, log: log)
    }

    static func manifest(_ instance: Instance, _ id: String) async -> [String: Any]? {
        guard let response = await offPool({ ServeCommandTests.get("http://127.0.0.1:\(instance.port)/v1/renders/\(id)", key: key) }), response.status == 200 else { return nil }
        return try? JSONSerialization.jsonObject(with: response.body) as? [String: Any]
    }

    /// Starts two instances, sends one a render of twelve messages (0.5 s each at the stub, one at a time), waits until
    /// the instance that claimed it (either may) has synthesized one, does `interrupt` to that one, and waits for the
    /// other to finish the render. Returns the render's id, the seconds from the interruption to done, and the
    /// instances: `a` the one interrupted, `b` the other.
    static func takeover(_ label: String, interrupt: (Instance) -> Void) async throws
        -> (id: String, seconds: Double, url: String, server: PostgresTestServer, a: Instance, b: Instance, directory: URL) {
        let server = try PostgresTestServer.shared.get()
        let url = try server.database(label)
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("chorus-takeover-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let stub = try StubSpeech.openAIServer(latency: 0.5)
        let first = try await start(database: url, directory: directory, name: "first", stub: stub)
        let second = try await start(database: url, directory: directory, name: "second", stub: stub)
        let messages = (1...12).map { #"{"speaker": "S\#($0 % 2)", "text": "Message \#($0) of a render that an instance leaves.", "voice": "openai:nova"}"# }
        let body = #"{"messages": [\#(messages.joined(separator: ","))]}"#
        let response = try #require(await offPool { ServeCommandTests.post("http://127.0.0.1:\(first.port)/v1/renders", key: key, json: body, async: true) })
        #expect(response.status == 202)
        let id = try #require((try JSONSerialization.jsonObject(with: response.body) as? [String: Any])?["id"] as? String)
        // Started: its row records a synthesized message (read from the database: the instances' HTTP answers can be
        // slow when the whole suite loads the machine).
        var started = false
        for _ in 0..<600 where !started {
            try await Task.sleep(nanoseconds: 100_000_000)
            let synthesized = try server.psql(url, "SELECT coalesce((progress::json->>'synthesized')::int, 0) FROM chorus_renders WHERE id = '\(id)' AND status = 'running'")
            started = (Int(synthesized) ?? 0) >= 1
        }
        #expect(started, "the render did not start")
        #expect(try server.psql(url, "SELECT status || ':' || attempts FROM chorus_renders WHERE id = '\(id)'") == "running:1")
        // The instance running it says so in its log (written a quarter second at a time: looked for until it is there).
        var runner: Instance?
        for _ in 0..<50 where runner == nil {
            runner = [first, second].first { ((try? String(contentsOf: $0.log, encoding: .utf8)) ?? "").contains("render claimed") }
            if runner == nil { try await Task.sleep(nanoseconds: 100_000_000) }
        }
        let a = try #require(runner), b = a.port == first.port ? second : first
        interrupt(a)
        let interrupted = Date()
        var done = false
        while !done && Date().timeIntervalSince(interrupted) < 60 {
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
        // Not before the lease (3 s) ran out; then within the render's own time (6 s) and a claim poll (slack for a loaded machine).
        #expect(result.seconds > 2.5 && result.seconds < 30, "taken over after \(result.seconds) s")
        let row = try result.server.psql(result.url, "SELECT status || ':' || attempts FROM chorus_renders WHERE id = '\(result.id)'")
        #expect(row == "done:2", "\(row); A: \((try? String(contentsOf: result.a.log, encoding: .utf8)) ?? "") B: \((try? String(contentsOf: result.b.log, encoding: .utf8)) ?? "")")
        let audio = result.directory.appendingPathComponent("shared/renders/\(result.id)/audio.mp3")
        let manifest = try #require(await Self.manifest(result.b, result.id))
        if Referee.available {
            let frames = try Referee.decodedFrames(audio, channels: manifest["channels"] as? Int ?? 1)
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
        for _ in 0..<50 where !stopped {
            try await Task.sleep(nanoseconds: 200_000_000)
            let log = (try? String(contentsOf: result.a.log, encoding: .utf8)) ?? ""
            stopped = log.contains("render stopped here") || log.contains("render finished after another instance took it over")
        }
        #expect(stopped, "A did not notice it had lost the render")
        #expect(try result.server.psql(result.url, "SELECT status || ':' || attempts FROM chorus_renders WHERE id = '\(result.id)'") == "done:2")
        // Done once: B's record stands (A completed nothing).
        let log = (try? String(contentsOf: result.b.log, encoding: .utf8)) ?? ""
        #expect(log.contains("render claimed"))
    }
}

/// Runs blocking work (a semaphore, a process) on a Dispatch thread, not on one of the few threads that run every
/// test's async work (blocking those starves the tests that wait on the network meanwhile).
func offPool<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
    await withCheckedContinuation { continuation in
        DispatchQueue.global().async { continuation.resume(returning: body()) }
    }
}

/// A value handed from a callback to a waiting thread.
final class ResultBox: @unchecked Sendable {
    private let semaphore = DispatchSemaphore(value: 0)
    private var value: (Int, Data)?
    func set(_ value: (Int, Data)) { self.value = value; semaphore.signal() }
    func wait(seconds: Double) -> (status: Int, body: Data)? {
        guard semaphore.wait(timeout: .now() + seconds) == .success, let value else { return nil }
        return (value.0, value.1)
    }
}
