import ChorusAudio
import ChorusFixtures
import ChorusSpeechTestSupport
import ChorusTestSupport
import Foundation
import Testing

@testable import ChorusConversation
@testable import ChorusSpeech

/// The engine a providers file configures, and renders through its servers; the file alone is tested in
/// ChorusSpeechTests.
@Suite("OpenAI-compatible servers named in CHORUS_PROVIDERS")
struct ProvidersFileTests {
    @Test("a broken or missing file stops the engine with the reason; unset, the standard providers alone")
    func brokenFileStopsEngine() throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("providers.json")
        try Data(#"{"k": {"kind": "openai"}}"#.utf8).write(to: path)
        for environment in [["CHORUS_PROVIDERS": path.path], ["CHORUS_PROVIDERS": directory.file("missing.json").path]] {
            let registry = VoiceRegistry.standard(environment: environment)
            let error = #expect(throws: VoiceError.self) {
                _ = try Chorus(configuration: Chorus.Configuration(registry: registry, cacheDirectory: directory.file("cache")))
            }
            #expect(error?.description.contains("CHORUS_PROVIDERS") == true, "\(String(describing: error))")
        }
        let plain = VoiceRegistry.standard(environment: [:])
        #expect(plain.configurationError == nil && plain.ids == ["elevenlabs", "espeak", "flite", "kokoro", "openai", "piper"])
    }

    /// A server speaking OpenAI's route that answers WAV at 22.05 kHz (as Piper-based servers do), recording requests.
    static func wavServer() throws -> StubServer {
        try StubServer { request in
            guard request.method == "POST", request.path == "/v1/audio/speech", let body = request.json, let input = body["input"] as? String else {
                return .json(404, ["error": ["message": "not found"]])
            }
            if body["voice"] as? String == "missing" {
                return .json(400, ["error": ["message": "Voice 'missing' not found, key \(request.headers["authorization"] ?? "")"]])
            }
            let samples = PCM16.samples(littleEndian: StubAudio.pcm16(for: input, rate: 22_050))
            let wav = try! AudioFileWriter.data(AudioBuffer(format: AudioFormat(sampleRate: 22_050, channels: 1), samples: samples), as: .wav)
            return StubServer.Response(status: 200, headers: ["Content-Type": "audio/wav"], body: wav)
        }
    }

    static func file(_ json: String, in directory: TemporaryDirectory) throws -> String {
        let url = directory.file("providers-\(UUID().uuidString.prefix(6)).json")
        try Data(json.utf8).write(to: url)
        return url.path
    }

    static func engine(_ environment: [String: String], cache: URL) throws -> Chorus {
        var configuration = Chorus.Configuration(registry: VoiceRegistry.standard(environment: environment), cacheDirectory: cache)
        configuration.transcriber = .off
        return try Chorus(configuration: configuration)
    }

    @Test(
        "kokoro:af_heart goes to the named server: its model, voice, WAV, the key from its variable; cached like any provider; the model is part of the key"
    )
    func rendersThroughNamedServer() async throws {
        let server = try Self.wavServer()
        let directory = try TemporaryDirectory()
        let json = ProvidersFileContract.json.replacingOccurrences(of: "http://127.0.0.1:8880/v1", with: server.baseURL + "/v1")
        let secret = "kk-SECRET-42"
        let environment = ["CHORUS_PROVIDERS": try Self.file(json, in: directory), "KOKORO_API_KEY": secret]
        let chat = try conversation(#"{"messages": [{"speaker": "Mom", "text": "Dinner is at seven.", "voice": "kokoro:af_heart"}]}"#, in: directory)
        let first = try await render(chat, with: Self.engine(environment, cache: directory.file("cache")))
        let request = try #require(server.requests.first)
        #expect(request.headers["authorization"] == "Bearer \(secret)")
        let body = try #require(request.json)
        #expect(body["model"] as? String == "kokoro" && body["voice"] as? String == "af_heart" && body["response_format"] as? String == "wav")
        #expect(body["input"] as? String == "Dinner is at seven.")
        let segment = first.result.timeline.segments[0]
        #expect(segment.voice == "kokoro:af_heart")
        // 19 characters × 10 ms, at least 0.3 s, decoded from the WAV's own rate (22.05 kHz) to 44.1 kHz.
        let seconds = Double(segment.endSample - segment.startSample) / 44_100
        #expect(seconds > 0.29 && seconds < 0.36, "\(seconds) s")
        // Again: from the cache, no request. Another model: asked again.
        _ = try await render(chat, with: Self.engine(environment, cache: directory.file("cache")))
        #expect(server.requests.count == 1)
        var other = environment
        other["CHORUS_PROVIDERS"] = try Self.file(json.replacingOccurrences(of: #""model": "kokoro""#, with: #""model": "kokoro-v2""#), in: directory)
        _ = try await render(chat, with: Self.engine(other, cache: directory.file("cache")))
        #expect(server.requests.count == 2 && server.requests.last?.json?["model"] as? String == "kokoro-v2")
    }

    @Test(
        "no key variable: no Authorization header; a key variable unset: refused before asking; an unconfigured voice: refused before asking; the key never in an error"
    )
    func keysAndVoices() async throws {
        let server = try Self.wavServer()
        let directory = try TemporaryDirectory()
        let base = server.baseURL + "/v1"
        let json = #"""
            {"local": {"kind": "openai", "base_url": "\#(base)", "model": "tts-1"},
             "keyed": {"kind": "openai", "base_url": "\#(base)", "model": "tts-1", "api_key_env": "KEYED_KEY", "voices": ["alloy"]}}
            """#
        let path = try Self.file(json, in: directory)
        let open = try Self.engine(["CHORUS_PROVIDERS": path], cache: directory.file("cache"))
        _ = try await render(
            try conversation(#"{"messages": [{"speaker": "A", "text": "Hello there.", "voice": "local:any-voice"}]}"#, in: directory), with: open)
        #expect(server.requests.count == 1 && server.requests[0].headers["authorization"] == nil)

        for (voice, message) in [
            ("keyed:alloy", "KEYED_KEY is not set"), ("keyed:nova", "nova is not one of the voices configured for keyed (alloy)"),
        ] {
            let environment = voice == "keyed:nova" ? ["CHORUS_PROVIDERS": path, "KEYED_KEY": "kk-1"] : ["CHORUS_PROVIDERS": path]
            let chat = try conversation(#"{"messages": [{"speaker": "A", "text": "Hi.", "voice": "\#(voice)"}]}"#, in: directory)
            let error = await #expect(throws: SynthesisError.self) {
                _ = try await render(chat, with: Self.engine(environment, cache: directory.file("cache")))
            }
            #expect(error?.description.contains(message) == true, "\(String(describing: error))")
        }
        #expect(server.requests.count == 1)

        // The server echoes the key in its error: it is redacted.
        let secret = "kk-SECRET-echoed"
        let chat = try conversation(#"{"messages": [{"speaker": "A", "text": "Hi.", "voice": "keyed:alloy"}]}"#, in: directory)
        let missing = try Self.file(json.replacingOccurrences(of: #""voices": ["alloy"]"#, with: #""voices": ["alloy", "missing"]"#), in: directory)
        let echoed = try conversation(#"{"messages": [{"speaker": "A", "text": "Hi.", "voice": "keyed:missing"}]}"#, in: directory)
        let error = await #expect(throws: SynthesisError.self) {
            _ = try await render(echoed, with: Self.engine(["CHORUS_PROVIDERS": missing, "KEYED_KEY": secret], cache: directory.file("cache")))
        }
        #expect(error?.underlying.kind == .voiceNotFound && error?.description.contains(secret) == false, "\(String(describing: error))")
        _ = chat
    }
}
