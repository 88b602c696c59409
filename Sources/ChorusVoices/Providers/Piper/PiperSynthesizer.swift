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

    /// One sentence spoken: its samples at the voice's rate, and when each of its phonemes is heard.
    struct Spoken: Sendable {
        var samples: [Float]
        /// Each phoneme of the sentence the voice knows, in order, with the samples from its start to the next one's
        /// (the pad Piper puts after each phoneme belongs to it).
        var phonemes: [(scalar: Unicode.Scalar, samples: Range<Int>)]
        /// Where the last phoneme ends (the end marker's frames, silence, follow).
        var speechEnd: Int
    }

    /// One sentence of phonemes (`EspeakEngine.phonemes`) spoken at `lengthScale` by `speaker`. Phonemes the voice
    /// does not know are left out by sherpa-onnx.
    /// - Throws: `VoiceError`: `.unavailable` when sherpa-onnx gives nothing, `.configuration` when the voice's output
    ///   does not end with its phonemes' durations (`scripts/piper_to_sherpa.py`).
    func speak(_ phonemes: String, lengthScale: Double, speaker: Int) throws -> Spoken {
        let scalars = Array(phonemes.unicodeScalars)
        guard !scalars.isEmpty else { return Spoken(samples: [], phonemes: [], speechEnd: 0) }
        let codepoints = scalars.map { Int32(bitPattern: $0.value) }
        var lengths = [Int32(codepoints.count)]
        let output = try codepoints.withUnsafeBufferPointer { points in
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
                guard let samples = audio.pointee.samples, audio.pointee.n > 0 else { return [Float]() }
                return Array(UnsafeBufferPointer(start: samples, count: Int(audio.pointee.n)))
            }
        }
        guard !output.isEmpty else { return Spoken(samples: [], phonemes: [], speechEnd: 0) }
        return try Self.split(output, known: scalars.filter(voice.symbols.contains), voice: voice)
    }

    /// The prepared graph's output, `[samples…, frames per phoneme id…, id count]`, taken apart. sherpa-onnx gives
    /// the graph the ids start, pad, then each known phoneme followed by a pad, then end (older releases leave out
    /// the pad after the start): each phoneme's time is its id's frames and its pad's.
    static func split(_ output: [Float], known: [Unicode.Scalar], voice: PiperVoice) throws -> Spoken {
        func refuse(_ reason: String) -> VoiceError {
            PiperVoice.broken("\(voice.model.path): \(reason); run scripts/setup.sh to prepare the voice again")
        }
        guard let last = output.last, last.rounded() == last, last >= 2, Int(last) < output.count else {
            throw refuse("its output does not end with its phonemes' durations")
        }
        let count = Int(last)
        let frames = output[(output.count - 1 - count)..<(output.count - 1)]
        guard frames.allSatisfy({ $0 >= 0 && $0.rounded() == $0 && $0 < 1e6 }) else {
            throw refuse("its phoneme durations are not whole frames")
        }
        let samples = Array(output[..<(output.count - 1 - count)])
        let total = frames.reduce(0) { $0 + Int($1) }
        guard total > 0, samples.count % total == 0 else {
            throw refuse("\(samples.count) samples are not a whole number of its \(total) frames")
        }
        let hop = samples.count / total
        let lead = count - 2 * known.count - 1
        guard lead == 1 || lead == 2 else {
            throw refuse("sherpa-onnx timed \(count) phoneme ids for \(known.count) phonemes")
        }
        var starts = [0]
        starts.reserveCapacity(count + 1)
        for frame in frames { starts.append(starts[starts.count - 1] + Int(frame) * hop) }
        let phonemes = known.enumerated().map { index, scalar in
            (scalar: scalar, samples: starts[lead + 2 * index]..<starts[lead + 2 * index + 2])
        }
        return Spoken(samples: samples, phonemes: phonemes, speechEnd: starts[count - 1])
    }
}
