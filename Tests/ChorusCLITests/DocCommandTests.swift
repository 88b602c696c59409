import ChorusTestSupport
import Foundation
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
#if canImport(Glibc)
import Glibc
#endif

/// Every shell command the README and `docs/` show is run here, as a reader would paste it: each ```sh block either
/// runs, in order with the blocks before it in its document, from a scratch folder holding `samples/` (with
/// `swift run -c release chorus` meaning the `chorus` of this build, and `localhost:8080` a `chorus serve` this test
/// starts, open on loopback and offline), or says in an HTML comment right before it why it cannot run in a test.
@Suite("Commands in the README and docs", .serialized)
struct DocCommandTests {
    struct Block: Sendable, CustomStringConvertible {
        var document: String
        var line: Int
        var script: String
        /// Why the tests do not run it, when they do not.
        var notRun: String?
        var description: String { "\(document):\(line)" }
    }

    static let marker = "<!-- not run by the tests:"

    /// The README and every page of `docs/`, as paths from the repository's root.
    static var documents: [String] {
        let docs = (try? FileManager.default.contentsOfDirectory(atPath: Repository.file("docs").path)) ?? []
        return ["README.md"] + docs.filter { $0.hasSuffix(".md") }.sorted().map { "docs/\($0)" }
    }

    /// The ```sh blocks of `document`, in order.
    static func blocks(in document: String) throws -> [Block] {
        let lines = try String(contentsOf: Repository.file(document), encoding: .utf8).components(separatedBy: "\n")
        var blocks: [Block] = []
        var index = 0
        while index < lines.count {
            defer { index += 1 }
            guard lines[index].trimmingCharacters(in: .whitespaces) == "```sh" else { continue }
            let start = index
            var body: [String] = []
            index += 1
            while index < lines.count, lines[index].trimmingCharacters(in: .whitespaces) != "```" {
                body.append(lines[index])
                index += 1
            }
            let previous = start > 0 ? lines[start - 1].trimmingCharacters(in: .whitespaces) : ""
            var reason: String?
            if previous.hasPrefix(marker), previous.hasSuffix("-->") {
                reason = previous.dropFirst(marker.count).dropLast(3).trimmingCharacters(in: .whitespaces)
            }
            blocks.append(Block(document: document, line: start + 1, script: body.joined(separator: "\n"), notRun: reason))
        }
        return blocks
    }

    @Test("every shell block of the README and docs runs in these tests, or says why it cannot; few cannot")
    func everyBlockAccounted() throws {
        let blocks = try Self.documents.flatMap { try Self.blocks(in: $0) }
        #expect(blocks.count >= 10, "found only \(blocks.count) shell blocks")
        let notRun = blocks.filter { $0.notRun != nil }
        for block in notRun { #expect(block.notRun?.count ?? 0 >= 10, "\(block): give the reason it is not run") }
        #expect(notRun.count <= blocks.count / 2, "most commands shown must run: \(notRun.count) of \(blocks.count) do not")
        // A command shown outside a ```sh block would escape this test: none begins a line in another fenced block.
        for document in Self.documents {
            let text = try String(contentsOf: Repository.file(document), encoding: .utf8)
            #expect(!text.contains("```bash") && !text.contains("```shell") && !text.contains("```console"), "\(document): use ```sh")
        }
    }

    @Test(
        "the runnable shell blocks of each document run in order, and every file they write with -o or > exists and is not empty",
        arguments: documents)
    func runs(document: String) async throws {
        let blocks = try Self.blocks(in: document).filter { $0.notRun == nil }
        guard !blocks.isEmpty else { return }
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("chorus-doc-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: scratch) }
        try FileManager.default.createSymbolicLink(at: scratch.appendingPathComponent("samples"), withDestinationURL: Repository.file("samples"))
        var environment = ProcessInfo.processInfo.environment
        for name in ["OPENAI_API_KEY", "ELEVENLABS_API_KEY", "CHORUS_API_KEYS", "CHORUS_API_KEYS_FILE"] { environment[name] = nil }
        environment["CHORUS_CACHE_DIR"] = scratch.appendingPathComponent("cache").path
        environment["CHORUS"] = CLI.binary.path
        var service: Process?
        defer {
            if let service, service.isRunning { kill(service.processIdentifier, SIGKILL) }
        }
        var port = 8080
        for block in blocks {
            var script = block.script.replacingOccurrences(of: "swift run -c release chorus", with: "\"$CHORUS\"")
            if script.contains("localhost:8080") {
                if service == nil { (service, port) = try await Self.serve(scratch: scratch, environment: environment) }
                script = script.replacingOccurrences(of: "localhost:8080", with: "localhost:\(port)")
            }
            let run = try await Self.bash(script, in: scratch, environment: environment)
            #expect(run.status == 0, "\(block) failed (exit \(run.status)): \(run.errors.suffix(600))")
            for name in Self.outputs(of: script) {
                let size = (try? FileManager.default.attributesOfItem(atPath: scratch.appendingPathComponent(name).path)[.size] as? Int) ?? nil
                #expect((size ?? 0) > 0, "\(block): \(name) was not written")
            }
        }
    }

    /// The files a script names with `-o FILE` (curl and chorus) or `> FILE`, but for /dev/null and variables.
    static func outputs(of script: String) -> [String] {
        let words = script.components(separatedBy: .whitespacesAndNewlines).filter { !$0.isEmpty }
        var names: [String] = []
        for (index, word) in words.enumerated() where (word == "-o" || word == ">") && index + 1 < words.count {
            let name = words[index + 1].trimmingCharacters(in: CharacterSet(charactersIn: "'\""))
            if name != "/dev/null", !name.contains("$"), !name.hasPrefix("-") { names.append(name) }
        }
        return names
    }

    /// `chorus serve` on a free port with its data in `scratch` (open: no keys, on loopback), once it answers; it
    /// transcribes, as a service set up by the README does.
    static func serve(scratch: URL, environment: [String: String]) async throws -> (Process, Int) {
        let port = try ServeCommandTests.freePort()
        var environment = environment
        environment["CHORUS_TRANSCRIPTION_MODEL"] = "whisper-tiny.en"
        let process = try await ServeCommandTests.launch(
            ["--port", String(port), "--data-dir", scratch.appendingPathComponent("service").path],
            environment: environment, port: port)
        return (process, port)
    }

    /// Runs `script` with bash (`-e`: the first failing command fails it), off the cooperative threads.
    static func bash(_ script: String, in directory: URL, environment: [String: String]) async throws -> ToolRunResult {
        try await offCooperativeThreads {
            let run = try ToolRun(
                ["-e", "-c", script], executable: URL(fileURLWithPath: "/bin/bash"), directory: directory,
                environment: environment, limit: 900)
            return ToolRunResult(status: run.status, errors: run.errors)
        }
    }

    struct ToolRunResult: Sendable {
        var status: Int32
        var errors: String
    }
}
