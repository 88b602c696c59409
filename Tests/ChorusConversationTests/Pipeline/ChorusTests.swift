import ChorusAudio
import ChorusConversation
import ChorusFixtures
import ChorusTestSupport
import Foundation
import Testing

@testable import ChorusSpeech
@testable import ChorusWire

/// The library entry point: events while the render runs, streaming, memory output, cancellation.
@Suite("Chorus: one call from a conversation to its outputs")
struct ChorusTests {
    /// `count` text messages for the stub OpenAI provider.
    static func textChat(_ count: Int) -> Conversation {
        Conversation(
            messages: (0..<count).map {
                Conversation.Message(
                    speaker: ["Ann", "Ben", "Cy"][$0 % 3], text: "Message \($0 + 1), about dinner at seven.",
                    voice: VoiceID(provider: "openai", voice: "nova"))
            })
    }

    /// Seconds since `start`.
    final class Stopwatch: @unchecked Sendable {
        let start = Date()
        private let lock = NSLock()
        private var marks: [(String, Double)] = []
        func mark(_ name: String) {
            lock.lock()
            marks.append((name, Date().timeIntervalSince(start)))
            lock.unlock()
        }
        func first(_ name: String) -> Double? {
            lock.lock()
            defer { lock.unlock() }
            return marks.first { $0.0 == name }?.1
        }
        func last(_ name: String) -> Double? {
            lock.lock()
            defer { lock.unlock() }
            return marks.last { $0.0 == name }?.1
        }
    }

    @Test("a render renders its plan: a voice installed after the plan was made changes neither its voices nor its audio's")
    func planFixesVoices() async throws {
        let directory = try TemporaryDirectory(prefix: "chorus-plan")
        let piper = directory.file("piper")
        try FileManager.default.createDirectory(at: piper, withIntermediateDirectories: true)
        let registry = VoiceRegistry(providers: [PiperProvider(folder: piper), FliteProvider(), EspeakProvider()])
        let chorus = try Chorus(configuration: Chorus.Configuration(registry: registry, cacheDirectory: directory.file("cache")))
        let conversation = Conversation(messages: [
            .init(speaker: "Dad", text: "Dinner is ready."), .init(speaker: "Mom", text: "Coming."),
        ])
        let plan = chorus.plan(conversation)
        #expect(plan.voices.allSatisfy { $0?.provider == "flite" }, "\(plan.voices)")
        // Piper's natural voice installed while the plan waits: a new plan gives it to Dad, this one does not.
        try FileManager.default.createSymbolicLink(
            at: piper.appendingPathComponent(PiperVoice.defaultName),
            withDestinationURL: PiperVoice.voicesFolder().appendingPathComponent(PiperVoice.defaultName))
        #expect(chorus.plan(conversation).voices[0]?.description == "piper:\(PiperVoice.defaultName)")
        let result = try await chorus.render(plan, to: RenderOutputs(format: .wav)).result()
        #expect(result.timeline.segments.map(\.voice) == plan.voices.map { $0?.description })
        let again = try await chorus.render(plan, to: RenderOutputs(format: .wav)).result()
        #expect(again.audio == result.audio, "the same plan, the same audio")
    }

    @Test("segments are reported in order while later messages are still being synthesized")
    func eventsWhileRendering() async throws {
        let server = try StubSpeech.openAIServer(latency: 0.25)
        let directory = try TemporaryDirectory()
        let chorus = try makeChorus(server: server, cache: directory.file("cache"), concurrency: 1)
        let clock = Stopwatch()
        var segments: [Timeline.Segment] = []
        var progress: [RenderProgress] = []
        var finished: RenderResult?
        for try await event in chorus.render(Self.textChat(6), to: RenderOutputs(audio: directory.file("out.mp3"))) {
            switch event {
            case .segment(let segment):
                clock.mark("segment")
                segments.append(segment)
            case .progress(let counts): progress.append(counts)
            case .finished(let result):
                clock.mark("finished")
                finished = result
            case .warning: break
            }
        }
        let result = try #require(finished)
        #expect(segments.map(\.index) == Array(0..<6))
        #expect(segments == result.timeline.segments, "each segment was final when reported")
        // One request at a time, 0.25 s each: the first message is placed long before the sixth is synthesized.
        let firstSegment = try #require(clock.first("segment"))
        let end = try #require(clock.first("finished"))
        #expect(end - firstSegment > 0.9, "first segment at \(firstSegment) s, finished at \(end) s")
        #expect(zip(progress, progress.dropFirst()).allSatisfy { $0.rendered <= $1.rendered && $0.synthesized <= $1.synthesized })
        #expect(progress.last?.rendered == 6 && progress.last?.synthesized == 6 && progress.last?.total == 6)
        #expect(try AudioFileReader(url: directory.file("out.mp3")).readAll().frameCount == result.timeline.samples)
    }

    @Test("a streamed MP3 is the stored file minus its tag frame, and its first bytes come before the last message is synthesized")
    func streaming() async throws {
        let server = try StubSpeech.openAIServer(latency: 0.25)
        let directory = try TemporaryDirectory()
        let chorus = try makeChorus(server: server, cache: directory.file("cache"), concurrency: 1)
        let stream = AudioChunkStream()
        var outputs = RenderOutputs(audio: directory.file("out.mp3"))
        outputs.stream = stream
        outputs.keepAudioInMemory = true
        let clock = Stopwatch()
        let listener = Task {
            var received = Data()
            for try await chunk in stream {
                if received.isEmpty { clock.mark("first byte") }
                received.append(chunk)
            }
            return received
        }
        let result = try await chorus.render(Self.textChat(6), to: outputs).result()
        clock.mark("done")
        let streamed = try await listener.value
        let stored = try Data(contentsOf: directory.file("out.mp3"))
        #expect(result.audio == stored, "the in-memory copy is the stored file")
        let tagFrame = stored.count - streamed.count
        #expect(tagFrame > 100 && tagFrame < 1_500)
        #expect(stored.dropFirst(tagFrame) == streamed)
        #expect(stored.prefix(tagFrame).range(of: Data("Info".utf8)) != nil, "what the stream lacks is the LAME/Xing tag frame")
        let first = try #require(clock.first("first byte"))
        #expect(try #require(clock.first("done")) - first > 0.9, "first byte at \(first) s")
        #expect(try AudioFileReader(url: directory.file("out.mp3")).readAll().frameCount == result.timeline.samples)
    }

    @Test("cancelling a render stops provider requests and leaves no files")
    func cancellation() async throws {
        let server = try StubSpeech.openAIServer(latency: 0.4)
        let directory = try TemporaryDirectory()
        let chorus = try makeChorus(server: server, cache: directory.file("cache"), concurrency: 2)
        try Data("keep me".utf8).write(to: directory.file("out.mp3"))
        let render = Task {
            try await chorus.render(Self.textChat(40), to: RenderOutputs(audio: directory.file("out.mp3"), timeline: directory.file("out.json")))
                .result()
        }
        // Cancelled once the first requests have reached the provider.
        for _ in 0..<600 where server.requests.count < 2 { try await Task.sleep(nanoseconds: 10_000_000) }
        let before = server.requests.count
        #expect(before >= 2, "the render never reached the provider")
        render.cancel()
        await #expect(throws: CancellationError.self) { _ = try await render.value }
        let sent = server.requests.count
        // At most the two in flight as it was cancelled (a request a moment from being sent) reach it after.
        #expect(sent <= before + 2 && sent < 40, "\(sent) requests, \(before) when cancelled, two in flight at most")
        try await Task.sleep(nanoseconds: 800_000_000)  // what is checked is that nothing happens: only time shows it
        #expect(server.requests.count == sent, "no request after the cancel")
        let names = try FileManager.default.contentsOfDirectory(atPath: directory.url.path).filter { $0 != "cache" }.sorted()
        #expect(names == ["out.mp3"], "only the untouched old output: \(names)")
        #expect(try String(contentsOf: directory.file("out.mp3"), encoding: .utf8) == "keep me")
    }

    @Test("leaving the event loop early cancels the render and removes its temporary files")
    func abandonedIteration() async throws {
        let server = try StubSpeech.openAIServer(latency: 0.2)
        let directory = try TemporaryDirectory()
        let chorus = try makeChorus(server: server, cache: directory.file("cache"), concurrency: 2)
        for try await event in chorus.render(Self.textChat(30), to: RenderOutputs(audio: directory.file("out.ogg"))) {
            if case .segment = event { break }
        }
        var leftovers: [String] = []
        for _ in 0..<200 {  // the cancelled render cleans up as it stops: soon, but later under a sanitizer
            leftovers = try FileManager.default.contentsOfDirectory(atPath: directory.url.path).filter { $0 != "cache" }
            if leftovers.isEmpty { break }
            try await Task.sleep(nanoseconds: 50_000_000)
        }
        #expect(leftovers.isEmpty, "\(leftovers)")
    }

    @Test("recorded clips given as bytes in memory render like files")
    func inMemoryClips() async throws {
        let directory = try TemporaryDirectory()
        let format = AudioFormat(sampleRate: 22_050, channels: 1)
        let voice = SignalGenerator.speechLike(fundamental: 180, seconds: 1.5, format: format, seed: 3)
        let bytes = try ClipEncoding.m4a.data(voice)
        try bytes.write(to: directory.file("clip.m4a"))
        let chorus = try makeChorus(server: nil, cache: directory.file("cache"))
        let fromMemory = try await chorus.render(
            Conversation(messages: [.init(speaker: "A", audio: .data(bytes, label: "upload"))]),
            to: RenderOutputs(format: .wav)
        ).result()
        let fromFile = try await chorus.render(
            Conversation(messages: [.init(speaker: "A", audio: .file(directory.file("clip.m4a"), label: "upload"))]),
            to: RenderOutputs(format: .wav)
        ).result()
        #expect(fromMemory.audio != nil && fromMemory.audio == fromFile.audio)
        #expect(fromMemory.timeline == fromFile.timeline)
    }
}
