import ChorusAudio
import ChorusSpeech
public import ChorusWire
import Testing

/// Real speech for the recognizer to hear, made by a Flite voice: what the tests of Whisper and of renders with recorded
/// messages transcribe.
public enum FliteSpeech {
    public static let sentence = "The quick brown fox jumps over the lazy dog, and practice moved to half past four."

    /// Mono 16 kHz speech of `text` by a Flite voice, with Flite's own word times. awb by default: tiny.en hears
    /// it best of Flite's voices (1 word of 16 wrong, the same with any of Flite's noise: measured over 4 takes
    /// drawing different noise; slt varied between 3 and 5 wrong, too close to
    /// any bound).
    public static func speech(_ text: String = sentence, voice: String = "awb") async throws -> ([Float], [WordTiming]) {
        let speech = try await FliteProvider().synthesize(SynthesisRequest(voice: voice, text: text, outputFormat: "pcm"))
        guard case .pcm(let buffer) = speech.audio else { throw VoiceError(.invalidResponse, provider: "flite", message: "not pcm") }
        #expect(buffer.format == AudioFormat(sampleRate: 16_000, channels: 1))
        return (buffer.samples, speech.words ?? [])
    }
}
