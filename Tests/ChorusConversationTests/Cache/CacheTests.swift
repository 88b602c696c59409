import ChorusAudio
import ChorusFixtures
import ChorusTestSupport
import Foundation
import Testing

@testable import ChorusConversation

@Suite("Synthesis cache")
struct CacheTests {
    static let voice = "JBFqnCBsd6RMkjVDRZzb"

    func chat(_ directory: TemporaryDirectory, stability: Double = 0.5) throws -> Conversation {
        try conversation(
            #"""
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
        let first = try makeChorus(server: server, cache: directory.file("cache"))
        let one = try await render(chat(directory), with: first, to: directory.file("one.wav"))
        #expect(server.requests.count == 2)
        #expect(one.progress.requests == 3, "two HTTP requests and one espeak-ng synthesis")

        let second = try makeChorus(server: server, cache: directory.file("cache"))
        let two = try await render(chat(directory), with: second, to: directory.file("two.wav"))
        #expect(server.requests.count == 2, "no new HTTP requests")
        #expect(two.progress.requests == 0 && two.progress.cacheHits == 3)
        #expect(try Data(contentsOf: directory.file("one.wav")) == Data(contentsOf: directory.file("two.wav")))
        #expect(one.timeline == two.timeline)
    }

    @Test("changing a voice setting changes the key; the key never depends on the API key")
    func keys() {
        let base = SynthesisCache.key(provider: "elevenlabs", voice: "v", format: "pcm_24000", settings: ["stability": .number(0.5)], text: "Hi")
        #expect(
            base == SynthesisCache.key(provider: "elevenlabs", voice: "v", format: "pcm_24000", settings: ["stability": .number(0.5)], text: "Hi"))
        #expect(
            base != SynthesisCache.key(provider: "elevenlabs", voice: "v", format: "pcm_24000", settings: ["stability": .number(0.6)], text: "Hi"))
        #expect(
            base != SynthesisCache.key(provider: "elevenlabs", voice: "v", format: "mp3_44100_128", settings: ["stability": .number(0.5)], text: "Hi")
        )
        #expect(
            base
                != SynthesisCache.key(
                    provider: "elevenlabs", voice: "v", format: "pcm_24000", settings: ["stability": .number(0.5)], text: "Hi",
                    previousText: "Before."))
        #expect(base.count == 64)
    }

    @Test("an entry that fails to decode is discarded and synthesized again, never served")
    func brokenEntry() async throws {
        let server = try Self.stub()
        let directory = try TemporaryDirectory()
        let first = try makeChorus(server: server, cache: directory.file("cache"))
        let original = try await render(chat(directory), with: first)
        let audioFiles = try FileManager.default.subpathsOfDirectory(atPath: directory.file("cache").path).filter { $0.hasSuffix(".flac") }
        #expect(audioFiles.count == 3)
        for file in audioFiles {
            try Data("garbage, not FLAC".utf8).write(to: directory.file("cache").appendingPathComponent(file))
        }
        let second = try makeChorus(server: server, cache: directory.file("cache"))
        let again = try await render(chat(directory), with: second, to: directory.file("out.wav"))
        // Each hit was decoded once, while rendering, found broken, removed and synthesized afresh.
        #expect(again.progress.cacheHits == 3 && again.progress.requests == 3)
        #expect(server.requests.count == 4)
        // The stub providers answer the same again. espeak-ng 1.51 carries pitch-flutter and noise state from one
        // utterance to the next, so its message is only checked to be there.
        #expect(Array(again.timeline.segments.prefix(2)) == Array(original.timeline.segments.prefix(2)))
        #expect(again.timeline.segments[2].endSample - again.timeline.segments[2].startSample > 22_050)
        let warnings = again.events.compactMap { event -> String? in
            if case .warning(let text) = event { return text }
            return nil
        }
        #expect(warnings.count == 3 && warnings.allSatisfy { $0.contains("did not decode") })
        let third = try await render(chat(directory), with: makeChorus(server: server, cache: directory.file("cache")))
        #expect(third.progress.requests == 0 && third.progress.cacheHits == 3, "the fresh entries replaced the broken ones")
    }

    @Test("a spoken intro or outro whose cached entry fails to decode is synthesized again, with the same warning as a message")
    func brokenBookend() async throws {
        let server = try Self.stub()
        let directory = try TemporaryDirectory()
        let json = #"""
            {"intro": {"speaker": "B", "text": "Welcome.", "voice": "openai:nova"}, "outro": {"speaker": "B", "text": "Goodbye.", "voice": "openai:alloy"},
             "messages": [{"speaker": "C", "text": "Third, offline.", "voice": "espeak:en-us"}]}
            """#
        let first = try await render(try conversation(json, in: directory), with: try makeChorus(server: server, cache: directory.file("cache")))
        #expect(server.requests.count == 2 && first.progress.requests == 3)
        for file in try FileManager.default.subpathsOfDirectory(atPath: directory.file("cache").path) where file.hasSuffix(".flac") {
            try Data("garbage, not FLAC".utf8).write(to: directory.file("cache").appendingPathComponent(file))
        }
        let again = try await render(try conversation(json, in: directory), with: try makeChorus(server: server, cache: directory.file("cache")))
        #expect(server.requests.count == 4, "intro and outro asked for again")
        let warnings = again.events.compactMap { event -> String? in
            if case .warning(let text) = event { return text }
            return nil
        }
        for role in ["intro", "outro"] {
            #expect(warnings.contains { $0.hasPrefix("\(role): a cached clip did not decode") }, "\(warnings)")
        }
    }

    @Test("the cache stays under its size cap, evicting the least recently used")
    func eviction() async throws {
        let server = try Self.stub()
        let directory = try TemporaryDirectory()
        let chorus = try makeChorus(server: server, cache: directory.file("cache"), maxBytes: 60_000)
        for index in 0..<6 {
            let text = String(repeating: "Word \(index) ", count: 30)
            _ = try await speak(text, voice: "openai:nova", with: chorus)
        }
        let files = try FileManager.default.subpathsOfDirectory(atPath: directory.file("cache").path)
            .map { directory.file("cache").appendingPathComponent($0) }
            .filter { !$0.hasDirectoryPath && $0.pathExtension != "" }
        let total = try files.reduce(0) { $0 + (try FileManager.default.attributesOfItem(atPath: $1.path)[.size] as? Int ?? 0) }
        #expect(total <= 60_000)
        // The most recent message is still cached.
        let before = server.requests.count
        _ = try await speak(String(repeating: "Word 5 ", count: 30), voice: "openai:nova", with: chorus)
        #expect(server.requests.count == before)
    }

    @Test("no cache file holds the API key")
    func noSecretsCached() async throws {
        let server = try Self.stub()
        let directory = try TemporaryDirectory()
        _ = try await render(chat(directory), with: makeChorus(server: server, cache: directory.file("cache")))
        for path in try FileManager.default.subpathsOfDirectory(atPath: directory.file("cache").path) {
            let data = (try? Data(contentsOf: directory.file("cache").appendingPathComponent(path))) ?? Data()
            #expect(data.range(of: Data(testKey.utf8)) == nil, "\(path) contains the key")
        }
    }
}
