import ChorusAudio
import ChorusSpeechTestSupport
import ChorusTestSupport
import Testing

@testable import ChorusListening
@testable import ChorusText
@testable import ChorusWire

/// Natural offline voices: the Piper voice set-up prepares (`scripts/prepare_piper.py`), run in process on ONNX
/// Runtime. Real phonemes in, real audio out, heard back by the Whisper model; broken voices refused before the runtime
/// sees them.
///
/// What the Whisper model hears of the voice; the voice alone is tested in ChorusSpeechTests.
@Suite("Piper voices (ONNX Runtime)")
struct PiperTests {
    @Test("a sentence is heard back word for word by the Whisper model, and its words start where Whisper hears them")
    func heardBack() async throws {
        let (buffer, words) = try await PiperSpeech.speak()
        #expect(buffer.format == AudioFormat(sampleRate: 22_050, channels: 1))
        #expect((4.0...9.0).contains(buffer.duration), "\(buffer.duration) s")
        #expect(buffer.peak > 0.1 && buffer.peak <= 1)
        #expect(words.map(\.word) == WordAligner.words(in: PiperSpeech.text).map(\.word))
        #expect(zip(words, words.dropFirst()).allSatisfy { $0.end <= $1.start + 1e-9 && $0.start < $0.end })
        #expect(words.last.map { $0.end <= buffer.duration + 1e-6 } == true)
        let (heard, differences) = try await Self.heard(buffer, words: words)
        #expect(WordErrors.rate(heard.text, PiperSpeech.text) <= 0.1, "\(heard.text)")
        // Each word the recognizer heard as written starts where the voice says it does: most within 120 ms, half within
        // 60 ms, none further than 500 ms (Whisper's word times from its alignment heads, as OpenAI's and faster-whisper's
        // — which gives the same times on this audio — sometimes give a short word's frames to its neighbour: "lazy").
        #expect(differences.count >= words.count - 3, "\(heard.words)")
        #expect(
            differences.filter { $0 < 0.12 }.count >= differences.count * 8 / 10 && differences.sorted()[differences.count / 2] < 0.06
                && differences.allSatisfy { $0 < 0.5 }, "\(differences)")
    }

    /// `buffer` as Whisper hears it: mono at 16 kHz.
    /// `buffer` heard by the Whisper model, and for each of `words` it heard as written, how far its start is from where
    /// Whisper heard it (seconds).
    static func heard(_ buffer: AudioBuffer, words: [WordTiming]) async throws -> (transcript: Transcript, differences: [Double]) {
        let recognizer = try await WhisperTests.recognizer()
        let samples = try await offCooperativeThreads { try Self.speech16k(buffer) }
        let heard = try await recognizer.transcribe(samples)
        func plain(_ word: String) -> String { word.lowercased().filter(\.isLetter) }
        var differences: [Double] = []
        var next = heard.words.startIndex
        for word in words {
            guard let match = heard.words[next...].firstIndex(where: { plain($0.word) == plain(word.word) }) else { continue }
            differences.append(abs(heard.words[match].start - word.start))
            next = heard.words.index(after: match)
        }
        return (heard, differences)
    }

    static func speech16k(_ buffer: AudioBuffer) throws -> [Float] {
        let resampler = try Resampler(from: buffer.format, to: AudioFormat(sampleRate: 16_000, channels: 1))
        var samples: [Float] = []
        try buffer.samples.withUnsafeBufferPointer { try resampler.convert($0, into: &samples) }
        try resampler.flush(into: &samples)
        return samples
    }
}
