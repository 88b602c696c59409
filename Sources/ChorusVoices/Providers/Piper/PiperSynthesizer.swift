import CSherpaOnnx
import Foundation

/// sherpa-onnx's synthesizer for one prepared Piper voice with one noise setting (sherpa-onnx fixes noise when it
/// loads a model; speed and speaker are per call). The one owner of its C handle: made when this is, destroyed with it.
/// sherpa-onnx's synthesizer may be called from several threads at once (each call runs the graph with its own
/// tensors); the tests check that parallel calls give what one call gives.
final class PiperSynthesizer: @unchecked Sendable {
    let voice: PiperVoice
    let noise: Noise
    private let handle: OpaquePointer
    private let strings = CStrings()

    /// What a synthesizer is loaded with.
    struct Noise: Hashable, Sendable {
        var scale: Double
        var w: Double
    }

    /// Loads `voice` (checked by `PiperVoice`) with `noise` (about a second and 200 MB resident).
    /// - Throws: `VoiceError` (`.configuration`) when sherpa-onnx refuses it.
    init(voice: PiperVoice, noise: Noise) throws {
        self.voice = voice
        self.noise = noise
        var config = SherpaOnnxOfflineTtsConfig()
        config.model.vits.model = strings[voice.model.path]
        config.model.vits.tokens = strings[voice.tokens.path]
        config.model.vits.lexicon = strings[""]
        config.model.vits.data_dir = strings[""]
        config.model.vits.dict_dir = strings[""]
        config.model.vits.noise_scale = Self.setting(noise.scale)
        config.model.vits.noise_scale_w = Self.setting(noise.w)
        config.model.vits.length_scale = 1
        config.model.num_threads = 1
        config.model.debug = 0
        config.model.provider = strings["cpu"]
        config.rule_fsts = strings[""]
        config.rule_fars = strings[""]
        config.max_num_sentences = 1
        config.silence_scale = 1
        guard let made = SherpaOnnxCreateOfflineTts(&config) else {
            throw PiperVoice.broken("\(voice.model.path): sherpa-onnx could not load this voice")
        }
        handle = made
        let rate = Int(SherpaOnnxOfflineTtsSampleRate(handle))
        guard rate == voice.sampleRate else {
            throw PiperVoice.broken("\(voice.model.path): sherpa-onnx reads \(rate) Hz, the voice says \(voice.sampleRate)")
        }
    }

    deinit { SherpaOnnxDestroyOfflineTts(handle) }

    /// sherpa-onnx takes 0 to mean "the model's default": a setting of 0 is passed as the smallest normal float,
    /// which scales the noise to nothing all the same.
    private static func setting(_ value: Double) -> Float { value == 0 ? Float.leastNormalMagnitude : Float(value) }

    /// One sentence of phonemes (`EspeakEngine.phonemes`) spoken at `lengthScale` by `speaker`: samples at the
    /// voice's rate. Phonemes the voice does not know are left out by sherpa-onnx.
    /// - Throws: `VoiceError` (`.unavailable`) when sherpa-onnx gives nothing.
    func speak(_ phonemes: String, lengthScale: Double, speaker: Int) throws -> [Float] {
        let codepoints = phonemes.unicodeScalars.map { Int32(bitPattern: $0.value) }
        guard !codepoints.isEmpty else { return [] }
        var lengths = [Int32(codepoints.count)]
        return try codepoints.withUnsafeBufferPointer { points in
            try lengths.withUnsafeMutableBufferPointer { lengths in
                var generation = SherpaOnnxGenerationConfig()
                generation.silence_scale = 1
                generation.speed = Float(1 / lengthScale)
                generation.sid = Int32(speaker)
                generation.phoneme_codepoints = points.baseAddress
                generation.phoneme_codepoints_lens = UnsafePointer(lengths.baseAddress)
                generation.phoneme_codepoints_num_sentences = 1
                guard let audio = SherpaOnnxOfflineTtsGenerateWithConfig(handle, "", &generation, nil, nil) else {
                    throw VoiceError(.unavailable, provider: "piper", message: "sherpa-onnx gave no audio for this sentence")
                }
                defer { SherpaOnnxDestroyOfflineTtsGeneratedAudio(audio) }
                guard let samples = audio.pointee.samples, audio.pointee.n > 0 else { return [] }
                return Array(UnsafeBufferPointer(start: samples, count: Int(audio.pointee.n)))
            }
        }
    }
}
