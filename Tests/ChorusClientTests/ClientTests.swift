import ChorusAudio
import ChorusClient
import ChorusConversation
import ChorusFixtures
import ChorusService
import ChorusTestSupport
import ChorusWire
import Foundation
import Hummingbird
import HummingbirdTesting
import Testing

@testable import ChorusInference
@testable import ChorusListening
@testable import ChorusSpeech

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The Swift client against a live service started in-process (not a mock).
@Suite("ChorusClient against a live service")
struct ClientTests {
    static let key = "client-test-key-0123456789abcdef"

    /// Runs `body` with a client talking to a fresh service over a real socket.
    func withService(rateLimit: Int = 0, transcription: Bool = false, _ body: @Sendable (ChorusClient) async throws -> Void) async throws {
        let directory = try TemporaryDirectory(prefix: "chorus-client")
        var configuration = try ServiceConfiguration(environment: [:])
        configuration.dataDirectory = directory.file("data")
        configuration.apiKeys = [Self.key]
        configuration.port = 0
        configuration.jsonLogs = true
        configuration.rateLimitPerMinute = rateLimit
        configuration.transcriptionModel = transcription ? WhisperModel.defaultName : nil
        configuration.environment["CHORUS_MODELS_DIR"] = ModelFolder.root().path
        configuration.registry = VoiceRegistry(providers: [
            FliteProvider(), EspeakProvider(), OpenAIProvider(apiKey: nil), ElevenLabsProvider(apiKey: nil),
        ])
        let server = try await ChorusServer(
            configuration: configuration, logger: .init(label: "test") { _ in JSONLogHandler(label: "test") { _ in } })
        try await server.application.test(.live) { client in
            try await body(ChorusClient(baseURL: URL(string: "http://127.0.0.1:\(client.port!)")!, apiKey: Self.key))
        }
    }

    @Test("lexicons: stored, listed, read, used by name by a render and by speech, deleted; a refused one is an error naming the field")
    func lexicons() async throws {
        try await withService { chorus in
            let stored = try await chorus.putLexicon(
                "family", entries: ["Bob": .object(["ipa": .string("ˌnɛbjʊkədˈnɛzəɹ")]), "Nguyen": .string("win")])
            #expect(stored.entryCount == 2 && stored.entries?["Nguyen"] == .string("win"))
            #expect(try await chorus.lexicons().map(\.name) == ["family"])
            #expect(try await chorus.lexicon("family").digest == stored.digest)
            // Used by name: espeak-ng says the IPA (the long name), so "Bob" takes as long as "Nebuchadnezzar" does.
            var request = RenderRequest(messages: [.init(speaker: "A", text: "See you Bob.", voice: "espeak:en-us")])
            request.lexicon = .string("family")
            let named = try await chorus.render(request)
            let plain = try await chorus.speech("See you Bob.", voice: "espeak:en-us")
            let spoken = try await chorus.speech("See you Bob.", voice: "espeak:en-us", lexicon: "family")
            func length(_ manifest: RenderManifest) -> Double { (manifest.timeline?.segments[0]).map { $0.end - $0.start } ?? 0 }
            #expect(
                abs(length(named) - length(spoken)) < 0.05 && length(spoken) - length(plain) > 0.3,
                "\([length(named), length(spoken), length(plain)])")
            #expect(named.timeline?.segments[0].words?.map(\.word) == ["See", "you", "Bob"])
            let refused = await #expect(throws: ChorusClientError.self) {
                try await chorus.putLexicon("family", entries: ["Bob": .object(["ipa": .string("b o b")])])
            }
            #expect(refused?.status == 422 && refused?.field == "entries.Bob.ipa", "\(String(describing: refused))")
            let unknown = await #expect(throws: ChorusClientError.self) { try await chorus.speech("Hi.", voice: "espeak:en-us", lexicon: "nobody") }
            #expect(unknown?.code == "unknown_lexicon")
            await #expect(throws: ChorusClientError.self) { try await chorus.lexicon("../renders") }
            try await chorus.deleteLexicon("family")
            #expect(try await chorus.lexicons().isEmpty)
        }
    }

    @Test("upload a voice note, render it with a text reply, read the timeline and waveform, fetch the audio with a range")
    func renderFlow() async throws {
        try await withService { chorus in
            let voices = try await chorus.voices()
            #expect(voices.contains { $0.id == "flite:slt" })
            let note = try ClipEncoding.m4a.data(SignalGenerator.speechLike(fundamental: 170, seconds: 2, format: .speech, seed: 4))
            let clip = try await chorus.uploadClip(note)
            #expect(clip.samples == 88_200)
            let manifest = try await chorus.render(
                RenderRequest(messages: [.init(speaker: "Mom", clip: clip.id), .init(speaker: "Kid", text: "On my way home now.")]))
            #expect(manifest.status == .done && manifest.timeline?.segments.map(\.speaker) == ["Mom", "Kid"])
            let timeline = try await chorus.timeline(manifest.id)
            #expect(timeline == manifest.timeline)
            let waveform = try await chorus.waveform(manifest.id, pixelsPerSecond: 50)
            #expect(waveform.bits == 8 && waveform.samplesPerPixel == 882 && waveform.data.count == waveform.length * 2)
            var request = URLRequest(url: chorus.audioURL(manifest.id))
            for (name, value) in chorus.authorizationHeader { request.setValue(value, forHTTPHeaderField: name) }
            request.setValue("bytes=0-1", forHTTPHeaderField: "Range")
            let (bytes, response) = try await URLSession.shared.data(for: request)
            #expect((response as? HTTPURLResponse)?.statusCode == 206 && bytes.count == 2)
            try await chorus.delete(manifest.id)
            await #expect(throws: ChorusClientError.self) { _ = try await chorus.manifest(manifest.id) }
        }
    }

    @Test("start a render and follow its events: progress, every segment, then done")
    func events() async throws {
        try await withService { chorus in
            let request = RenderRequest(
                messages: ["One thing.", "Another thing.", "A third thing."].map { .init(speaker: "Ann", text: $0, voice: "espeak:en-us") })
            let plan = try await chorus.plan(request)
            #expect(plan.speakers == [.init(name: "Ann", voice: "espeak:en-us", byDefault: false)] && !plan.rendered)
            let started = try await chorus.startRender(request)
            #expect(started.id == plan.id)
            var segments: [Timeline.Segment] = []
            var done: RenderManifest?
            var sawProgress = false
            for try await update in chorus.events(started.id) {
                switch update {
                case .progress: sawProgress = true
                case .segment(let segment): segments.append(segment)
                case .done(let manifest): done = manifest
                }
            }
            #expect(sawProgress && segments.map(\.index) == [0, 1, 2])
            #expect(done?.status == .done && done?.timeline?.segments == segments)
            let spoken = try await chorus.speech("Amen.", voice: "flite:slt")
            #expect(spoken.timeline?.segments.first?.words?.map(\.word) == ["Amen"])
        }
    }

    @Test("transcribe a voice note (bytes, or an uploaded clip by id) and align its known text")
    func transcribeAndAlign() async throws {
        let note = try Data(contentsOf: Repository.file("samples/clips/marcus-1.m4a"))
        try await withService(transcription: true) { chorus in
            let heard = try await chorus.transcribe(note, language: "en")
            #expect(heard.text.lowercased().hasPrefix("i can get her") && heard.language == "english", "\(heard.text)")
            #expect((heard.words?.count ?? 0) >= 8 && heard.segments?.isEmpty == false)
            let clip = try await chorus.uploadClip(note)
            #expect(try await chorus.transcribe(clip: clip.id) == heard)
            let aligned = try await chorus.align(note, text: "I can get her. I'm leaving work at four anyway.")
            #expect(aligned.words?.map(\.word) == ["I", "can", "get", "her", "I'm", "leaving", "work", "at", "four", "anyway"])
            #expect(aligned.segments?.count == 2)
            // Another language goes to the multilingual model; one Whisper does not know is refused naming the field.
            #expect(try await chorus.transcribe(note, language: "de").language == "german")
            do {
                _ = try await chorus.transcribe(note, language: "xx")
                Issue.record("expected 400")
            } catch let error as ChorusClientError {
                #expect(error.status == 400 && error.field == "language", "\(error)")
            }
        }
    }

    @Test("a request waits as long as the client's timeout (600 s unless told; URLSession's own is 60 s), then fails timed out")
    func timeout() async throws {
        // A server that answers late (the stub stops stalling as soon as the client hangs up).
        let server = try StubServer { request in
            var response = StubServer.Response.json(200, ["voices": [] as [Any]])
            response.delay = request.headers["authorization"] == "Bearer hasty" ? 30 : 2
            return response
        }
        let patient = ChorusClient(baseURL: URL(string: server.baseURL)!, apiKey: "patient", timeout: 20)
        #expect(try await patient.voices().isEmpty)
        // A timeout that is no time at all is the default: the late answer still arrives.
        for nonsense in [0, -.infinity] as [TimeInterval] {
            #expect(try await ChorusClient(baseURL: URL(string: server.baseURL)!, apiKey: "patient", timeout: nonsense).voices().isEmpty)
        }
        let hasty = ChorusClient(baseURL: URL(string: server.baseURL)!, apiKey: "hasty", timeout: 1)
        let started = Date()
        do {
            _ = try await hasty.voices()
            Issue.record("expected a timeout")
        } catch {
            #expect((error as? URLError)?.code == .timedOut, "\(error)")
        }
        #expect(Date().timeIntervalSince(started) < 25)
    }

    @Test("a rate-limited call surfaces Retry-After")
    func retryAfter() async throws {
        try await withService(rateLimit: 1) { chorus in
            _ = try await chorus.voices()
            do {
                _ = try await chorus.voices()
                Issue.record("expected 429")
            } catch let error as ChorusClientError {
                #expect(error.status == 429 && error.code == "rate_limited" && (error.retryAfter ?? 0) >= 1)
            }
        }
    }

    @Test("errors are typed from the service's error body: status, code, field")
    func errors() async throws {
        try await withService { chorus in
            do {
                _ = try await chorus.render(RenderRequest(messages: [.init(speaker: "A", text: "x")], output: OutputSettings(sampleRate: 7)))
                Issue.record("expected an error")
            } catch let error as ChorusClientError {
                #expect(error.status == 422 && error.code == "invalid" && error.field == "output.sample_rate")
            }
            let stranger = ChorusClient(baseURL: chorus.baseURL, apiKey: "wrong-key-0123456789")
            do {
                _ = try await stranger.voices()
                Issue.record("expected an error")
            } catch let error as ChorusClientError {
                #expect(error.status == 401 && error.code == "unauthorized")
            }
            do {
                _ = try await chorus.clone(name: "Mom", clips: ["abc"])
                Issue.record("expected an error")
            } catch let error as ChorusClientError {
                #expect(error.status == 409 && error.code == "provider_not_configured")
            }
        }
    }
}
