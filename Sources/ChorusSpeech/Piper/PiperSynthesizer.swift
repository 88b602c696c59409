import ChorusInference
import Foundation

/// One prepared Piper voice loaded into ONNX Runtime: the one owner of its session, made when this is and released
/// with it. Noise, speed and speaker are given per call (the voice's `scales` and `sid` inputs), so one load serves
/// every setting. `speak` may be called from several threads at once (the runtime's sessions allow it; each call has
/// tensors of its own); the tests check that parallel calls give what one call gives.
final class PiperSynthesizer: @unchecked Sendable {
    let voice: PiperVoice
    private let session: InferenceSession

    /// What a voice is spoken with besides its length scale.
    struct Noise: Hashable, Sendable {
        var scale: Double
        var w: Double
    }

    /// Loads `voice` (checked by `PiperVoice`; about a second).
    /// - Throws: `VoiceError` (`.configuration`) naming the file when the runtime refuses it or its inputs and outputs
    ///   are not a prepared Piper voice's.
    init(voice: PiperVoice) throws {
        self.voice = voice
        let bytes: Data
        do {
            bytes = try Data(contentsOf: voice.model, options: .alwaysMapped)
        } catch {
            throw PiperVoice.broken("\(voice.model.path): cannot be read")
        }
        session = try VoiceError.inference("piper") {
            let session = try InferenceSession(file: voice.model, bytes: bytes, threads: .own(1), owner: "piper")
            var inputs: [InferenceSession.Port] = [.int64("input", [-1, -1]), .int64("input_lengths", [-1]), .float("scales", [3])]
            if voice.speakers > 1 { inputs.append(.int64("sid", [-1])) }
            try session.expect(
                inputs: inputs, outputs: [.float("output", session.outputs.first?.shape.map { _ in -1 } ?? [-1]), .float("durations", [-1])])
            return session
        }
    }

    /// One sentence of phonemes (`EspeakEngine.phonemes`) spoken at `lengthScale` with `noise` by `speaker`, as Piper
    /// gives them to its voices: start, pad, then each phoneme the voice knows followed by a pad, then end. Phonemes
    /// the voice does not know are left out.
    /// - Throws: `VoiceError`: `.unavailable` when the runtime fails, `.configuration` when the voice's durations do not
    ///   account for its samples (`scripts/prepare_piper.py`).
    func speak(_ phonemes: String, lengthScale: Double, noise: Noise, speaker: Int) throws -> SpokenPhonemes {
        let known = phonemes.unicodeScalars.filter(voice.hasSymbol)
        guard !known.isEmpty else { return SpokenPhonemes(samples: [], phonemes: [], speechEnd: 0) }
        let pad = voice.ids["_"]!
        let start = voice.ids["^"]!
        let end = voice.ids["$"]!
        var ids = [start, pad]
        for scalar in known { ids += [voice.ids[scalar]!, pad] }
        ids.append(end)
        let (samples, frames) = try VoiceError.inference("piper") {
            var feeds: [(name: String, value: any TensorValue)] = [
                ("input", try Tensor(shape: [1, ids.count], values: ids.map(Int64.init))),
                ("input_lengths", try Tensor(shape: [1], values: [Int64(ids.count)])),
                ("scales", try Tensor(shape: [3], values: [Float(noise.scale), Float(lengthScale), Float(noise.w)])),
            ]
            if voice.speakers > 1 { feeds.append(("sid", try Tensor(shape: [1], values: [Int64(speaker)]))) }
            let outputs = try session.run(feeds, outputs: ["output", "durations"])
            return (outputs[0].floatArray, outputs[1].floatArray)
        }
        return try Self.split(samples: samples, frames: frames, known: Array(known), voice: voice)
    }

    /// The samples and the frames of each phoneme id (start, pad, each known phoneme and its pad, end) taken apart:
    /// each phoneme's time is its id's frames and its pad's.
    static func split(samples: [Float], frames: [Float], known: [Unicode.Scalar], voice: PiperVoice) throws -> SpokenPhonemes {
        func refuse(_ reason: String) -> VoiceError {
            PiperVoice.broken("\(voice.model.path): \(reason); run scripts/setup.sh to prepare the voice again")
        }
        guard frames.count == 2 * known.count + 3 else { throw refuse("it timed \(frames.count) phoneme ids for \(known.count) phonemes") }
        guard frames.allSatisfy({ $0 >= 0 && $0.rounded() == $0 && $0 < 1e6 }) else { throw refuse("its phoneme durations are not whole frames") }
        let total = frames.reduce(0) { $0 + Int($1) }
        guard total > 0, samples.count % total == 0 else {
            throw refuse("\(samples.count) samples are not a whole number of its \(total) frames")
        }
        let hop = samples.count / total
        var starts = [0]
        starts.reserveCapacity(frames.count + 1)
        for frame in frames { starts.append(starts[starts.count - 1] + Int(frame) * hop) }
        let phonemes = known.enumerated().map { index, scalar in
            (scalar: scalar, samples: starts[2 + 2 * index]..<starts[4 + 2 * index])
        }
        return SpokenPhonemes(samples: samples, phonemes: phonemes, speechEnd: starts[frames.count - 1])
    }
}
