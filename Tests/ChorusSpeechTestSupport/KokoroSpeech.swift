public import ChorusAudio
public import ChorusSpeech
public import ChorusWire

/// Speech of Kokoro's voices (the Japanese pack set-up prepares), for the tests of the voices and of what the recognizer
/// hears of them.
public enum KokoroSpeech {
    public static let text = "The quick brown fox jumps over the lazy dog. Practice moved to half past four, so bring water!"

    public static func speak(
        _ text: String = text, voice: String = "jf_alpha", settings: [String: JSONValue] = [:],
        provider: KokoroProvider = KokoroProvider()
    ) async throws -> (AudioBuffer, [WordTiming]) {
        let speech = try await provider.synthesize(SynthesisRequest(voice: voice, text: text, settings: settings, outputFormat: "pcm"))
        guard case .pcm(let buffer) = speech.audio else { throw VoiceError(.invalidResponse, provider: "kokoro", message: "not pcm") }
        return (buffer, speech.words ?? [])
    }
}
