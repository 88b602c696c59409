public import ChorusAudio
public import ChorusSpeech
public import ChorusWire

/// Speech of the Piper voice set-up prepares, for the tests of the voice and of what the recognizer hears of it.
public enum PiperSpeech {
    public static let voice = PiperVoice.defaultName
    public static let text = "The quick brown fox jumps over the lazy dog. Practice moved to half past four, so bring water!"

    public static func speak(
        _ text: String = text, settings: [String: JSONValue] = [:],
        provider: PiperProvider = PiperProvider()
    ) async throws -> (AudioBuffer, [WordTiming]) {
        let speech = try await provider.synthesize(SynthesisRequest(voice: voice, text: text, settings: settings, outputFormat: "pcm"))
        guard case .pcm(let buffer) = speech.audio else { throw VoiceError(.invalidResponse, provider: "piper", message: "not pcm") }
        return (buffer, speech.words ?? [])
    }
}
