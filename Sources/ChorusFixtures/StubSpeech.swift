public import ChorusAudio
public import Foundation

/// Fake provider speech for tests and benchmarks: a speech-like signal whose length follows the
/// text (`secondsPerCharacter`), as 24 kHz 16-bit mono PCM, the raw format OpenAI and ElevenLabs send.
///
/// ```swift
/// let server = try StubSpeech.openAIServer(latency: 1)   // answers POST /v1/audio/speech after 1 s
/// ```
public enum StubSpeech {
    public static let sampleRate = 24_000

    /// Little-endian 16-bit PCM for `text`.
    public static func pcm16(for text: String, secondsPerCharacter: Double = 0.05) -> Data {
        let format = AudioFormat(sampleRate: sampleRate, channels: 1)
        var seed: UInt64 = 1_469_598_103_934_665_603
        for byte in text.utf8 { seed = (seed ^ UInt64(byte)) &* 1_099_511_628_211 }
        let voice = SignalGenerator.speechLike(
            fundamental: 120 + Double(seed % 100), seconds: max(0.3, Double(text.count) * secondsPerCharacter),
            format: format, seed: seed)
        var data = Data(capacity: voice.samples.count * 2)
        for sample in voice.samples {
            withUnsafeBytes(of: PCM16.quantize(sample).littleEndian) { data.append(contentsOf: $0) }
        }
        return data
    }

    /// A local server speaking OpenAI's `POST /v1/audio/speech` (`response_format: "pcm"`), answering
    /// each request after `latency` seconds, and not before `hold` is released when one is given. It answers with
    /// `speech(input)` — real speech made before the clock starts, 16-bit little-endian at `sampleRate` — where that
    /// gives any, else with a speech-like signal (`pcm16(for:)`).
    public static func openAIServer(
        latency: Double, hold: StubHold? = nil, speech: @escaping @Sendable (String) -> Data? = { _ in nil }
    ) throws -> StubServer {
        try StubServer { request in
            guard request.method == "POST", request.path == "/v1/audio/speech", let input = request.json?["input"] as? String else {
                return .json(404, ["error": ["message": "not found", "type": "invalid_request_error"]])
            }
            hold?.wait()
            return StubServer.Response(
                status: 200, headers: ["Content-Type": "audio/pcm"], body: speech(input) ?? pcm16(for: input), delay: latency)
        }
    }

    /// `buffer` (speech a voice made) as the stub answers it: mono at `sampleRate`, 16-bit little-endian.
    public static func pcm16(_ buffer: AudioBuffer) throws -> Data {
        let resampler = try Resampler(from: buffer.format, to: AudioFormat(sampleRate: sampleRate, channels: 1))
        var samples: [Float] = []
        try buffer.samples.withUnsafeBufferPointer { try resampler.convert($0, into: &samples) }
        try resampler.flush(into: &samples)
        var data = Data(capacity: samples.count * 2)
        for sample in samples {
            withUnsafeBytes(of: PCM16.quantize(sample).littleEndian) { data.append(contentsOf: $0) }
        }
        return data
    }
}

/// Holds a stub's answers until released, so that a test acts while a request is certainly unanswered (not merely
/// probably, within a latency that a loaded machine can outlast).
public final class StubHold: @unchecked Sendable {
    private let condition = NSCondition()
    private var released = false

    public init() {}

    /// Lets every held answer, and every later one, go.
    public func release() {
        condition.lock()
        released = true
        condition.broadcast()
        condition.unlock()
    }

    /// Waits (on a stub's connection thread) until released.
    func wait() {
        condition.lock()
        while !released { condition.wait() }
        condition.unlock()
    }
}
