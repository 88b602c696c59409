import ChorusAudio
import ChorusFixtures
import ChorusTestSupport
import Foundation
import Testing

@testable import ChorusConversation
@testable import ChorusListening
@testable import ChorusOutbound
@testable import ChorusSpeech
@testable import ChorusWire

let testKey = "sk-test-SECRET-0123456789abcdef"

/// Fake provider audio: a 220 Hz tone lasting `perCharacter` seconds per character, with 20 ms of silence each side.
enum StubAudio {
    static let perCharacter = 0.01
    static let edge = 0.02

    static func pcm16(for text: String, rate: Int = 24_000) -> Data {
        let format = AudioFormat(sampleRate: rate, channels: 1)
        let tone = SignalGenerator.concatenate([
            SignalGenerator.silence(seconds: edge, format: format),
            SignalGenerator.tone(frequency: 220, amplitude: 0.3, seconds: max(0.3, Double(text.count) * perCharacter), format: format),
            SignalGenerator.silence(seconds: edge, format: format),
        ])
        var data = Data(capacity: tone.samples.count * 2)
        for sample in tone.samples {
            withUnsafeBytes(of: Int16(max(-32_768, min(32_767, (sample * 32_768).rounded()))).littleEndian) { data.append(contentsOf: $0) }
        }
        return data
    }

    /// ElevenLabs `with-timestamps` JSON: audio plus per-character alignment.
    static func elevenLabs(_ request: StubServer.Request, format: String = "pcm_24000") -> StubServer.Response {
        let text = request.json?["text"] as? String ?? ""
        let audio: Data
        if format.hasPrefix("mp3") {
            let directory = try! TemporaryDirectory()
            let url = directory.file("a.mp3")
            try! ClipEncoding.mp3.write(AudioFileReader(data: wav(pcm16(for: text)), name: "x").readAll(), to: url)
            audio = try! Data(contentsOf: url)
        } else {
            audio = pcm16(for: text)
        }
        let characters = text.map(String.init)
        let starts = characters.indices.map { edge + Double($0) * perCharacter }
        return .json(
            200,
            [
                "audio_base64": audio.base64EncodedString(),
                "alignment": [
                    "characters": characters, "character_start_times_seconds": starts,
                    "character_end_times_seconds": starts.map { $0 + perCharacter },
                ],
                "normalized_alignment": NSNull(),
            ], headers: ["request-id": "req\(UUID().uuidString.prefix(8))", "character-cost": "\(text.count)"])
    }

    /// A minimal WAV around 24 kHz mono 16-bit PCM.
    static func wav(_ pcm: Data) -> Data {
        var data = Data("RIFF".utf8)
        func u32(_ value: Int) { withUnsafeBytes(of: UInt32(value).littleEndian) { data.append(contentsOf: $0) } }
        func u16(_ value: Int) { withUnsafeBytes(of: UInt16(value).littleEndian) { data.append(contentsOf: $0) } }
        u32(36 + pcm.count)
        data.append(contentsOf: Data("WAVEfmt ".utf8))
        u32(16)
        u16(1)
        u16(1)
        u32(24_000)
        u32(48_000)
        u16(2)
        u16(16)
        data.append(contentsOf: Data("data".utf8))
        u32(pcm.count)
        data.append(pcm)
        return data
    }
}

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

/// Median fundamental of voiced 40 ms frames, by autocorrelation (70–400 Hz).
func medianPitch(_ buffer: AudioBuffer) -> Double {
    let rate = buffer.format.sampleRate
    let frame = rate / 25
    let samples = buffer.samples
    let peak = buffer.peak
    var pitches: [Double] = []
    var start = 0
    while start + frame * 2 < samples.count {
        let window = Array(samples[start..<(start + frame * 2)])
        let energy = window.reduce(0) { $0 + $1 * $1 }
        if window.map(abs).max() ?? 0 > peak * 0.3 {
            var best = 0
            var bestValue: Float = 0
            for lag in (rate / 400)...(rate / 70) {
                var sum: Float = 0
                for index in 0..<frame { sum += window[index] * window[index + lag] }
                if sum > bestValue {
                    bestValue = sum
                    best = lag
                }
            }
            if bestValue > energy * 0.3 * 0.5, best > 0 { pitches.append(Double(rate) / Double(best)) }
        }
        start += frame
    }
    pitches.sort()
    return pitches.isEmpty ? 0 : pitches[pitches.count / 2]
}

func expectSecretFree(_ text: String, sourceLocation: SourceLocation = #_sourceLocation) {
    #expect(!text.contains(testKey), "the API key leaked: \(text)", sourceLocation: sourceLocation)
    #expect(!text.contains("SECRET"), "part of the API key leaked: \(text)", sourceLocation: sourceLocation)
}
