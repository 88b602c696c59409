import ChorusAudio
import ChorusTestSupport
import Foundation
import Testing

@Suite("CHORUS_PROVIDERS: an OpenAI-compatible server as a provider, from the command line")
struct ProvidersCommandTests {
    @Test(
        "a running chorus serve named in CHORUS_PROVIDERS: chorus voices lists its voices, chorus render speaks through it; a broken file stops both, naming the field"
    )
    func chorusThroughChorus() async throws {
        let directory = try ServeCommandTests.scratch()
        defer { try? FileManager.default.removeItem(at: directory) }
        let port = try ServeCommandTests.freePort()
        var serveEnvironment = ProcessInfo.processInfo.environment
        serveEnvironment["CHORUS_API_KEYS"] = ServeCommandTests.serveKey
        serveEnvironment["OPENAI_API_KEY"] = nil
        serveEnvironment["CHORUS_PROVIDERS"] = nil
        let server = try await ServeCommandTests.launch(
            ["--port", String(port), "--data-dir", directory.appendingPathComponent("data").path],
            environment: serveEnvironment, port: port)
        defer { if server.isRunning { server.terminate() } }

        let providers = directory.appendingPathComponent("providers.json")
        try Data(
            #"""
            {"upstream": {"kind": "openai", "base_url": "http://127.0.0.1:\#(port)/v1", "api_key_env": "UPSTREAM_KEY", "model": "tts-1",
                          "voices": ["alloy", "onyx"]}}
            """#.utf8
        ).write(to: providers)
        var environment = ProcessInfo.processInfo.environment
        environment["CHORUS_PROVIDERS"] = providers.path
        environment["UPSTREAM_KEY"] = ServeCommandTests.serveKey
        environment["CHORUS_CACHE_DIR"] = directory.appendingPathComponent("cache").path

        let voices = try await CLI.run(["voices", "--provider", "upstream"], in: directory, environment: environment)
        #expect(voices.status == 0 && voices.stdout.contains("upstream:alloy") && voices.stdout.contains("upstream:onyx"), "\(voices.stderr)")

        try Data(#"{"messages": [{"speaker": "Dad", "text": "The game starts at noon.", "voice": "upstream:onyx"}]}"#.utf8)
            .write(to: directory.appendingPathComponent("chat.json"))
        let render = try await CLI.run(
            ["render", "chat.json", "-o", "out.mp3", "--timeline", "out.json", "--no-transcribe"],
            in: directory, environment: environment)
        try #require(render.status == 0, "\(render.stderr)")
        let timeline = try JSONSerialization.jsonObject(with: Data(contentsOf: directory.appendingPathComponent("out.json"))) as! [String: Any]
        let segment = try #require((timeline["segments"] as? [[String: Any]])?.first)
        #expect(segment["voice"] as? String == "upstream:onyx")
        let audio = try AudioFileReader(url: directory.appendingPathComponent("out.mp3")).readAll()
        #expect(audio.duration > 0.8 && audio.peak > 0.1, "\(audio.duration) s, peak \(audio.peak)")

        // The key is wrong: the upstream service refuses it, and the error says so without the key.
        var wrong = environment
        wrong["UPSTREAM_KEY"] = "wrong-key-SECRET-987"
        try Data(#"{"messages": [{"speaker": "Dad", "text": "Another line entirely.", "voice": "upstream:alloy"}]}"#.utf8)
            .write(to: directory.appendingPathComponent("other.json"))
        let refused = try await CLI.run(["render", "other.json", "-o", "other.mp3", "--no-transcribe"], in: directory, environment: wrong)
        #expect(refused.status != 0 && refused.stderr.contains("upstream") && !refused.stderr.contains("wrong-key-SECRET-987"), "\(refused.stderr)")

        // A broken file: both commands stop, naming the file's field.
        try Data(#"{"upstream": {"kind": "openai", "base_url": "ftp://x/v1", "model": "m"}}"#.utf8).write(to: providers)
        for arguments in [["voices"], ["render", "chat.json", "-o", "again.mp3", "--no-transcribe"]] {
            let result = try await CLI.run(arguments, in: directory, environment: environment)
            #expect(
                result.status != 0 && result.stderr.contains("CHORUS_PROVIDERS") && result.stderr.contains("upstream.base_url"),
                "\(arguments): \(result.stderr)")
            #expect(!FileManager.default.fileExists(atPath: directory.appendingPathComponent("again.mp3").path))
        }
    }
}
