import ChorusAudio
@testable import ChorusVoices
import Foundation
import Testing

@Suite("Synthesis cache")
struct CacheTests {
    static let voice = "JBFqnCBsd6RMkjVDRZzb"

    func chat(_ directory: TemporaryDirectory, stability: Double = 0.5) throws -> Conversation {
        try conversation(#"""
            {"voices": {"A": "elevenlabs:\#(Self.voice)", "B": "openai:nova"},
             "voice_settings": {"elevenlabs": {"stability": \#(stability)}},
             "messages": [{"speaker": "A", "text": "First."}, {"speaker": "B", "text": "Second."}, {"speaker": "C", "text": "Third, offline."}]}
            """#, in: directory)
    }

    static func stub() throws -> StubServer {
        try StubServer { request in
            request.path.hasPrefix("/v1/audio/speech")
                ? StubServer.Response(status: 200, body: StubAudio.pcm16(for: request.json?["input"] as? String ?? ""))
                : StubAudio.elevenLabs(request)
        }
    }

    @Test("a second render of the same conversation makes zero provider requests and sounds the same")
    func secondRenderIsFree() async throws {
        let server = try Self.stub()
        let directory = try TemporaryDirectory()
        let first = try makeSynthesizer(server: server, cache: directory.file("cache"))
        let one = try await render(chat(directory), with: first, to: directory.file("one.wav"))
        #expect(server.requests.count == 2)
        #expect(await first.statistics.requests == 3, "two HTTP requests and one espeak-ng synthesis")

        let second = try makeSynthesizer(server: server, cache: directory.file("cache"))
        let two = try await render(chat(directory), with: second, to: directory.file("two.wav"))
        #expect(server.requests.count == 2, "no new HTTP requests")
        let stats = await second.statistics
        #expect(stats.requests == 0 && stats.cacheHits == 3)
        #expect(try Data(contentsOf: directory.file("one.wav")) == Data(contentsOf: directory.file("two.wav")))
        #expect(one.timeline == two.timeline)
    }

    @Test("changing a voice setting changes the key; the key never depends on the API key")
    func keys() {
        let base = SynthesisCache.key(provider: "elevenlabs", voice: "v", format: "pcm_24000", settings: ["stability": .number(0.5)], text: "Hi")
        #expect(base == SynthesisCache.key(provider: "elevenlabs", voice: "v", format: "pcm_24000", settings: ["stability": .number(0.5)], text: "Hi"))
        #expect(base != SynthesisCache.key(provider: "elevenlabs", voice: "v", format: "pcm_24000", settings: ["stability": .number(0.6)], text: "Hi"))
        #expect(base != SynthesisCache.key(provider: "elevenlabs", voice: "v", format: "mp3_44100_128", settings: ["stability": .number(0.5)], text: "Hi"))
        #expect(base != SynthesisCache.key(provider: "elevenlabs", voice: "v", format: "pcm_24000", settings: ["stability": .number(0.5)], text: "Hi",
                                           previousText: "Before."))
        #expect(base.count == 64)
    }

    @Test("an entry that fails to decode is discarded and synthesized again, never served")
    func brokenEntry() async throws {
        let server = try Self.stub()
        let directory = try TemporaryDirectory()
        let first = try makeSynthesizer(server: server, cache: directory.file("cache"))
        _ = try await first.renderMessages(for: chat(directory))
        let audioFiles = try FileManager.default.subpathsOfDirectory(atPath: directory.file("cache").path).filter { $0.hasSuffix(".flac") }
        #expect(audioFiles.count == 3)
        for file in audioFiles {
            try Data("garbage, not FLAC".utf8).write(to: directory.file("cache").appendingPathComponent(file))
        }
        let second = try makeSynthesizer(server: server, cache: directory.file("cache"))
        _ = try await render(chat(directory), with: second, to: directory.file("out.wav"))
        let stats = await second.statistics
        #expect(stats.cacheHits == 0 && stats.requests == 3)
        #expect(server.requests.count == 4)
    }

    @Test("the cache stays under its size cap, evicting the least recently used")
    func eviction() async throws {
        let server = try Self.stub()
        let directory = try TemporaryDirectory()
        let synthesizer = try makeSynthesizer(server: server, cache: directory.file("cache"), maxBytes: 60_000)
        for index in 0..<6 {
            let text = String(repeating: "Word \(index) ", count: 30)
            _ = try await synthesizer.speak(text, voice: VoiceID("openai:nova")!)
        }
        let files = try FileManager.default.subpathsOfDirectory(atPath: directory.file("cache").path)
            .map { directory.file("cache").appendingPathComponent($0) }
            .filter { !$0.hasDirectoryPath && $0.pathExtension != "" }
        let total = try files.reduce(0) { $0 + (try FileManager.default.attributesOfItem(atPath: $1.path)[.size] as? Int ?? 0) }
        #expect(total <= 60_000)
        // The most recent message is still cached.
        let before = server.requests.count
        _ = try await synthesizer.speak(String(repeating: "Word 5 ", count: 30), voice: VoiceID("openai:nova")!)
        #expect(server.requests.count == before)
    }

    @Test("no cache file holds the API key")
    func noSecretsCached() async throws {
        let server = try Self.stub()
        let directory = try TemporaryDirectory()
        _ = try await makeSynthesizer(server: server, cache: directory.file("cache")).renderMessages(for: chat(directory))
        for path in try FileManager.default.subpathsOfDirectory(atPath: directory.file("cache").path) {
            let data = (try? Data(contentsOf: directory.file("cache").appendingPathComponent(path))) ?? Data()
            #expect(data.range(of: Data(testKey.utf8)) == nil, "\(path) contains the key")
        }
    }
}
