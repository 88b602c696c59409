import ChorusAudio
import ChorusInference
import ChorusSupport
import Foundation

/// The Kokoro model loaded into ONNX Runtime: the one owner of its sessions, made when this is (the urgent one when
/// first wanted) and released with it. Voice (style) and speed are given per call, so one load serves every voice.
/// `speak` may be called from several threads at once (each call has tensors of its own).
final class KokoroSynthesizer: Sendable {
    let model: KokoroModel
    /// One thread per call: two calls at once, one per core, speak faster than two on the runtime's shared pool
    /// (measured 15–20 % slower: each call's operators wait for the pool's thread the other call holds).
    private let session: InferenceSession
    /// The calls a listener waits for (`SynthesisThreads.isUrgent`: a stream's first message, spoken alone) run on
    /// the runtime's shared pool, on every core: a second session (~110 MB), made in the background the first time
    /// one is urgent, on a machine of more than one core; until it is ready, they run on `session`.
    private let urgentSession: BackgroundSession?

    /// Loads `model` (checked by `KokoroModel`; a second or two) on the caller's thread; `loader` makes the urgent
    /// session when it is first wanted.
    /// - Throws: `VoiceError` (`.configuration`) naming the file when the runtime refuses it or its inputs and outputs
    ///   are not a prepared Kokoro model's.
    init(model: KokoroModel, loader: WorkerPool) throws {
        self.model = model
        let bytes: Data
        do {
            bytes = try Data(contentsOf: model.model, options: .alwaysMapped)
        } catch {
            throw KokoroModel.broken("\(model.model.path): cannot be read")
        }
        let file = model.model
        let kokoro = BuiltInProvider.kokoro.rawValue
        session = try VoiceError.inference(kokoro) {
            let session = try InferenceSession(file: file, bytes: bytes, threads: .own(1), owner: kokoro)
            try session.expect(
                inputs: [.int64("tokens", [1, -1]), .float("style", [1, KokoroModel.styleWidth]), .float("speed", [1])],
                outputs: [.float("audio", [-1]), .float("durations", [-1])])
            return session
        }
        // The file is read again when the urgent session is made (holding the mapping would keep its 92 MB resident),
        // and only if it is still the file this session was made from.
        @Sendable func stamp() -> (size: Int?, date: Date?) {
            let attributes = try? FileManager.default.attributesOfItem(atPath: file.path)
            return (attributes?[.size] as? Int, attributes?[.modificationDate] as? Date)
        }
        let loaded = stamp()
        urgentSession =
            ONNXRuntime.sharedThreads > 1
            ? BackgroundSession(loader: loader) {
                guard loaded.size != nil, stamp() == loaded else {
                    throw KokoroModel.broken("\(file.path): changed since it was loaded")
                }
                let bytes = try Data(contentsOf: file, options: .alwaysMapped)
                return try InferenceSession(file: file, bytes: bytes, threads: .shared, owner: kokoro)
            } : nil
    }

    /// Whether urgent calls run on the shared pool's session yet.
    var urgentSessionReady: Bool { urgentSession?.isReady ?? false }

    /// The token ids of `phonemes` (canonically composed, as the vocabulary has them); symbols the vocabulary does not
    /// have are left out and listed.
    func tokens(of phonemes: String) -> (ids: [Int64], scalars: [Unicode.Scalar], dropped: [Unicode.Scalar]) {
        var ids: [Int64] = []
        var scalars: [Unicode.Scalar] = []
        var dropped: [Unicode.Scalar] = []
        for scalar in phonemes.precomposedStringWithCanonicalMapping.unicodeScalars {
            if let id = model.vocabulary[scalar] {
                ids.append(id)
                scalars.append(scalar)
            } else {
                dropped.append(scalar)
            }
        }
        return (ids, scalars, dropped)
    }

    /// espeak-ng's English IPA in the symbols Kokoro's English voices were trained on (misaki's): a diphthong and an
    /// affricate are one symbol each (`eɪ` A, `aɪ` I, `aʊ` W, `ɔɪ` Y, `dʒ` ʤ, `tʃ` ʧ; American `oʊ` O, British `əʊ` Q),
    /// and American r-coloured vowels, flaps and lengths as misaki writes them (`ɚ` əɹ, `ɜː` ɜɹ, `ɾ` T, no `ː`).
    /// Heard back by Whisper, a sentence the Japanese pack's voices spoke from plain IPA lost words ("moved to" heard
    /// as "move the") that it kept in these symbols. Other languages' phonemes are left as they are.
    static func trainedSymbols(_ phonemes: String, language: String) -> String {
        let language = language.lowercased()
        guard language.hasPrefix("en") else { return phonemes }
        let british = language.hasPrefix("en-gb") || language.hasPrefix("en-uk")
        var text = phonemes.precomposedStringWithCanonicalMapping
        let common = [("eɪ", "A"), ("aɪ", "I"), ("aʊ", "W"), ("ɔɪ", "Y"), ("dʒ", "ʤ"), ("tʃ", "ʧ")]
        let american = [("oʊ", "O"), ("ɚ", "əɹ"), ("ɜː", "ɜɹ"), ("ɾ", "T"), ("ː", "")]
        for (from, to) in common + (british ? [("əʊ", "Q")] : american) {
            text = text.replacingOccurrences(of: from, with: to)
        }
        return text
    }

    /// One sentence of phonemes spoken with `style` at `speed`: the tokens between two pads, the style's row for
    /// their count; `urgent` (a listener waits for it) on `urgentSession` once it is ready. At most
    /// `KokoroModel.mostTokens` tokens are spoken (callers cut longer text first).
    /// - Throws: `VoiceError`: `.unavailable` when the runtime fails, `.configuration` when the model's durations do not
    ///   account for its samples (`scripts/prepare_kokoro.py`).
    func speak(_ phonemes: String, style: KokoroVoices.Style, speed: Double, urgent: Bool) throws -> SpokenPhonemes {
        let (allIDs, allScalars, _) = tokens(of: phonemes)
        let ids = Array(allIDs.prefix(KokoroModel.mostTokens))
        let scalars = Array(allScalars.prefix(KokoroModel.mostTokens))
        guard !ids.isEmpty else { return SpokenPhonemes(samples: [], phonemes: [], speechEnd: 0) }
        let (samples, frames) = try VoiceError.inference(BuiltInProvider.kokoro.rawValue) {
            let outputs = try ((urgent ? urgentSession?.session : nil) ?? session).run(
                [
                    ("tokens", try Tensor(shape: [1, ids.count + 2], values: [0] + ids + [0])),
                    ("style", try Tensor(shape: [1, KokoroModel.styleWidth], values: style.row(forTokens: ids.count))),
                    ("speed", try Tensor(shape: [1], values: [Float(speed)])),
                ], outputs: ["audio", "durations"])
            return (outputs[0].floatArray, outputs[1].floatArray)
        }
        return try Self.split(samples: samples, frames: frames, scalars: scalars, model: model)
    }

    /// The samples and each token's frames (the start pad, each phoneme, the end pad) taken apart.
    static func split(samples: [Float], frames: [Float], scalars: [Unicode.Scalar], model: KokoroModel) throws -> SpokenPhonemes {
        func refuse(_ reason: String) -> VoiceError {
            KokoroModel.broken("\(model.model.path): \(reason); run scripts/setup.sh to prepare the model again")
        }
        guard frames.count == scalars.count + 2 else { throw refuse("it timed \(frames.count) tokens for \(scalars.count) phonemes") }
        guard frames.allSatisfy({ $0 >= 0 && $0.rounded() == $0 && $0 < 1e6 }) else { throw refuse("its token durations are not whole frames") }
        let total = frames.reduce(0) { $0 + Int($1) }
        guard total * KokoroModel.frameSamples == samples.count else {
            throw refuse("\(samples.count) samples are not its \(total) frames of \(KokoroModel.frameSamples)")
        }
        var starts = [0]
        starts.reserveCapacity(frames.count + 1)
        for frame in frames { starts.append(starts[starts.count - 1] + Int(frame) * KokoroModel.frameSamples) }
        let phonemes = scalars.enumerated().map { index, scalar in (scalar: scalar, samples: starts[1 + index]..<starts[2 + index]) }
        return SpokenPhonemes(samples: samples, phonemes: phonemes, speechEnd: starts[frames.count - 1])
    }
}

/// The process's Kokoro model: loaded once (and again only when its folder changes), on a thread of its own.
actor KokoroEngine {
    static let shared = KokoroEngine()

    private let loader = WorkerPool(threads: 1, name: "kokoro-load")
    private var load: (stamp: [String], task: Task<KokoroSynthesizer, any Error>)?

    /// The synthesizer of the model in `folder`, loaded once.
    /// - Throws: `VoiceError` (`.configuration`) naming the file and the reason, for as long as the folder stays as it is.
    func synthesizer(in folder: URL) async throws -> KokoroSynthesizer {
        let stamp = ModelFolder.contents(of: folder)
        if let load, load.stamp == stamp { return try await load.task.value }
        let loader = self.loader
        let task = Task { try await loader.run { try KokoroSynthesizer(model: try KokoroModel(folder: folder), loader: loader) } }
        load = (stamp, task)
        return try await task.value
    }
}
