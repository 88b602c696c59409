import ChorusAudio
import ChorusConversation
import ChorusTestSupport
import ChorusWire
import Foundation
import Testing

@testable import ChorusInference
@testable import ChorusListening
@testable import ChorusSpeech
@testable import ChorusSupport

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The account of a process's threads (`ThreadBudget`) held to a running `chorus serve`: every thread belongs to a pool
/// of the account, no pool runs more than it says, and the process no more than all of them.
@Suite("Thread budget")
struct ThreadBudgetTests {
    /// The threads of process `pid`: id → name (what the OS keeps of it: 15 bytes).
    static func threads(of pid: Int32) -> [String: String] {
        let tasks = "/proc/\(pid)/task"
        let ids = (try? FileManager.default.contentsOfDirectory(atPath: tasks)) ?? []
        var result: [String: String] = [:]
        for id in ids {
            if let name = try? String(contentsOfFile: "\(tasks)/\(id)/comm", encoding: .utf8) {
                result[id] = name.trimmingCharacters(in: .whitespacesAndNewlines)
            }
        }
        return result
    }

    /// The pool of `budget` a thread named `name` belongs to: Chorus's named pools by the longest name it starts with,
    /// the libraries' by how they name theirs (libdispatch's threads are named after its queues, `com.apple.root.…`,
    /// of which the OS keeps the last 15 bytes), the main thread by the executable's name.
    static func pool(of name: String, in budget: ThreadBudget) -> String? {
        if let named = budget.pools.filter({ $0.named && name.hasPrefix($0.name) }).max(by: { $0.name.count < $1.name.count }) {
            return named.name
        }
        if name.hasPrefix("NIO-") { return "NIO-" }
        if name.hasPrefix("TP-") { return "TP-" }
        if name.contains("qos") || name.hasPrefix("com.apple") || name.hasPrefix("dispatch") { return "dispatch" }
        if name == "chorus" { return "main" }
        return nil
    }

    @Test(
        "chorus serve under renders by Piper, Kokoro, Flite and espeak-ng, parallel MP3 encoding and Whisper transcriptions runs only the threads its account names, no pool more than it says"
    )
    func serviceStaysInBudget() async throws {
        let models = ModelFolder.root()
        try #require(
            FileManager.default.fileExists(atPath: models.appendingPathComponent(WhisperModel.defaultName).path),
            "the offline Whisper model is installed by scripts/setup.sh")
        let directory = try ServeCommandTests.scratch()
        defer { try? FileManager.default.removeItem(at: directory) }
        let port = try ServeCommandTests.freePort()
        let workers = 2
        let budget = ThreadBudget(workers: workers)
        var environment = ProcessInfo.processInfo.environment
        environment["CHORUS_API_KEYS"] = ServeCommandTests.serveKey
        environment["CHORUS_TRANSCRIPTION_MODEL"] = WhisperModel.defaultName
        environment["CHORUS_MODELS_DIR"] = models.path
        let process = try await ServeCommandTests.launch(
            [
                "--port", String(port), "--data-dir", directory.appendingPathComponent("data").path, "--workers", String(workers),
                "--rate-limit", "0",
            ], environment: environment, port: port)
        // Not `waitUntilExit`: Foundation's spins a core until the process ends.
        defer { if process.isRunning { process.terminate() } }
        let pid = process.processIdentifier
        let base = "http://127.0.0.1:\(port)"

        // Sampled every 20 ms while the work runs. A thread is counted under the last name it was seen with: a new thread
        // has its creator's name until it names itself.
        let watching = Task.detached { () -> (total: Int, pools: [String: Int], strangers: Set<String>, history: [String: [String]]) in
            var samples: [[String]] = []
            var names: [String: String] = [:]
            var history: [String: [String]] = [:]
            while !Task.isCancelled {
                let threads = Self.threads(of: pid)
                if threads.isEmpty { break }  // the service has ended
                samples.append(Array(threads.keys))
                names.merge(threads) { $1 }
                for (id, name) in threads where history[id]?.last != name { history[id, default: []].append(name) }
                do { try await Task.sleep(nanoseconds: 20_000_000) } catch { break }
            }
            var pools: [String: Int] = [:]
            var strangers = Set<String>()
            for sample in samples {
                var counts: [String: Int] = [:]
                for id in sample {
                    let name = names[id] ?? ""
                    if let pool = Self.pool(of: name, in: budget) { counts[pool, default: 0] += 1 } else { strangers.insert(name) }
                }
                pools.merge(counts) { max($0, $1) }
            }
            return (samples.map(\.count).max() ?? 0, pools, strangers, history)
        }

        // Three renders at once (a speaker each by Piper, Flite, Kokoro and espeak-ng; half a minute each,
        // so MP3 is encoded in pieces), then the first render's audio transcribed twice at once, twice over.
        let lines = [
            "Heads up, everyone. Coach just texted: soccer practice moved to half past four today.",
            "I'm stuck in a meeting until four. Can anyone grab Maya from school at a quarter past three?",
            "I can get her. I'll bring a snack too, she's always starving after school.",
            "Thank you! Her cleats are in the hallway closet, next to the umbrellas.",
        ]
        var ids: [String] = []
        for index in 0..<3 {
            let messages = (0..<8).map { turn in
                ["speaker": ["Dad", "Mom", "Grandma", "Maya"][turn % 4], "text": "\(lines[turn % 4]) Render \(index), turn \(turn)."]
            }
            let voices = ["Dad": "piper:\(PiperVoice.defaultName)", "Mom": "flite:slt", "Grandma": "kokoro:jf_alpha", "Maya": "espeak:en-us"]
            let request: [String: Any] = ["messages": messages, "voices": voices, "format": "mp3"]
            let json = String(decoding: try JSONSerialization.data(withJSONObject: request), as: UTF8.self)
            let response = try #require(await ServeCommandTests.post("\(base)/v1/renders", key: ServeCommandTests.serveKey, json: json, async: true))
            try #require(response.status == 202, "\(String(decoding: response.body, as: UTF8.self))")
            ids.append((try JSONSerialization.jsonObject(with: response.body) as! [String: Any])["id"] as! String)
        }
        for id in ids {
            var status = "queued"
            for _ in 0..<3000 where status == "queued" || status == "running" {
                try await Task.sleep(nanoseconds: 200_000_000)
                let manifest = try #require(await ServeCommandTests.get("\(base)/v1/renders/\(id)", key: ServeCommandTests.serveKey))
                status = ((try? JSONSerialization.jsonObject(with: manifest.body)) as? [String: Any])?["status"] as? String ?? "?"
            }
            try #require(status == "done", "render \(id) ended \(status)")
        }
        let audio = try #require(await ServeCommandTests.get("\(base)/v1/renders/\(ids[0])/audio", key: ServeCommandTests.serveKey))
        try #require(audio.status == 200)
        for _ in 0..<2 {
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<2 {
                    group.addTask {
                        var form = MultipartForm.Writer(boundary: "budget")
                        form.add("model", WhisperModel.defaultName)
                        form.add("file", data: audio.body, filename: "chat.mp3", contentType: "audio/mpeg")
                        var request = URLRequest(url: URL(string: "\(base)/v1/audio/transcriptions")!)
                        request.httpMethod = "POST"
                        request.setValue(form.contentType, forHTTPHeaderField: "Content-Type")
                        request.setValue("Bearer \(ServeCommandTests.serveKey)", forHTTPHeaderField: "Authorization")
                        request.httpBody = form.finished()
                        let response = try #require(await ServeCommandTests.send(request, timeout: 600))
                        #expect(response.status == 200, "\(String(decoding: response.body, as: UTF8.self))")
                    }
                }
                try await group.waitForAll()
            }
        }
        watching.cancel()
        let seen = await watching.value

        #expect(seen.strangers.isEmpty, "threads no pool of the account names: \(seen.strangers.sorted())")
        for pool in budget.pools {
            #expect(
                (seen.pools[pool.name] ?? 0) <= pool.threads,
                "\(pool.name): \(seen.pools[pool.name] ?? 0) threads, the account says \(pool.threads); names seen: \(seen.history.sorted { $0.key < $1.key })"
            )
        }
        #expect(seen.total <= budget.total, "\(seen.total) threads at once, the account says \(budget.total): \(seen.pools)")
        // The work reached every pool it should have (else the test would pass without looking at them).
        for started in ["chorus-audio", "speech", "kokoro-load", "flite", "espeak", "whisper-lane", "onnx"] {
            #expect((seen.pools[started] ?? 0) > 0, "no \(started) thread was seen: \(seen.pools)")
        }
        print("threads at most \(seen.total) of \(budget.total): \(seen.pools.sorted { $0.key < $1.key })")
    }
}

extension ThreadBudgetTests {
    @Test("docs/internals.md's table of threads is the account's (two cores, two workers)")
    func documentedTable() throws {
        let text = try String(contentsOf: Repository.file("docs/internals.md"), encoding: .utf8)
        let table = try #require(
            text.components(separatedBy: "<!-- thread-budget -->\n").dropFirst().first?.components(separatedBy: "\n<!-- /thread-budget -->").first)
        #expect(
            table == ThreadBudget(cores: 2, workers: 2).markdownTable,
            "docs/internals.md's table is not the account's:\n\(ThreadBudget(cores: 2, workers: 2).markdownTable)")
    }
}
