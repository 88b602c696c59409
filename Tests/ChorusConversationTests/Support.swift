import ChorusAudio
import ChorusFixtures
import ChorusTestSupport
import Foundation

@testable import ChorusConversation
@testable import ChorusListening
@testable import ChorusOutbound
@testable import ChorusSpeech
@testable import ChorusWire

/// A `Chorus` wired to the stub server (espeak-ng beside it), with a private cache and fast retries. No speech
/// recognizer unless asked for (the stubs' "speech" is tones; `RecordedSpeechTests` renders speech).
func makeChorus(
    server: StubServer?, cache directory: URL, concurrency: Int = 4,
    maxBytes: Int = 1 << 30, timeout: Int64 = 30, transcriber: Transcriber = .off
) throws -> Chorus {
    var providers: [any VoiceProvider] = [FliteProvider(), EspeakProvider()]
    if let server {
        providers.append(ElevenLabsProvider(baseURL: server.baseURL, apiKey: testKey, timeoutSeconds: timeout))
        providers.append(OpenAIProvider(baseURL: server.baseURL + "/v1", apiKey: testKey, timeoutSeconds: timeout))
    }
    var configuration = Chorus.Configuration(
        registry: VoiceRegistry(providers: providers), cacheDirectory: directory, cacheMaxBytes: maxBytes, providerConcurrency: concurrency,
        // maxTotal is wall time from the first attempt, which includes waits for a cooperative thread: this suite's
        // CPU-heavy tests run beside the HTTP ones and held them for 30 s under AddressSanitizer (a 429 after a
        // dropped connection was then given up). The budget itself is checked in RetryPolicyTests.
        retry: RetryPolicy(maxAttempts: 4, initialDelay: 0.01, maxDelay: 0.05, maxRetryAfter: 5, maxTotal: 600))
    configuration.transcriber = transcriber
    return try Chorus(configuration: configuration)
}

func conversation(_ json: String, in directory: TemporaryDirectory) throws -> Conversation {
    let url = directory.file("conversation-\(UUID().uuidString.prefix(6)).json")
    try Data(json.utf8).write(to: url)
    return try Conversation.load(from: url)
}

/// What a render reported: its result, the last progress counts, and every event in order.
struct Rendered {
    var result: RenderResult
    var progress: RenderProgress
    var events: [RenderEvent]
    var timeline: Timeline { result.timeline }
}

/// Renders `conversation` through `chorus` to `url` (with a timeline beside it), or to an in-memory WAV.
func render(_ conversation: Conversation, with chorus: Chorus, to url: URL? = nil, options: RenderOptions = RenderOptions()) async throws -> Rendered
{
    var outputs = RenderOutputs(format: .wav)
    if let url { outputs = RenderOutputs(audio: url, timeline: url.appendingPathExtension("json")) }
    let events = EventLog()
    let result = try await chorus.render(conversation, options: options, to: outputs).result { events.append($0) }
    let progress = events.all.compactMap { event -> RenderProgress? in
        if case .progress(let progress) = event { return progress }
        return nil
    }.last
    return Rendered(result: result, progress: progress ?? RenderProgress(total: conversation.messages.count, toSynthesize: 0), events: events.all)
}

/// One message in `voice`, rendered to memory.
func speak(_ text: String, voice: String, with chorus: Chorus) async throws -> Rendered {
    try await render(Conversation(messages: [.init(speaker: "Speaker", text: text, voice: VoiceID(voice))]), with: chorus)
}

/// Events collected from concurrent callbacks.
final class EventLog: @unchecked Sendable {
    private let lock = NSLock()
    private var events: [RenderEvent] = []
    func append(_ event: RenderEvent) {
        lock.lock()
        events.append(event)
        lock.unlock()
    }
    var all: [RenderEvent] {
        lock.lock()
        defer { lock.unlock() }
        return events
    }
}

/// The recognizer `WhisperTests` (ChorusListeningTests) hears with: the default model with two lanes, from the process's
/// one loader (loaded on a thread of its own, once).
func whisperRecognizer() async throws -> WhisperRecognizer {
    try await WhisperLoader.shared.recognizer(named: WhisperModel.defaultName, lanes: 2)
}
