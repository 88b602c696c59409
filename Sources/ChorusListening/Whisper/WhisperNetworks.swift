import ChorusInference
import ChorusSpeech
import Foundation

/// A Whisper model loaded: its encoder and decoder sessions (shared by every lane: the runtime lets several threads
/// run one session at once, and the weights are in memory once), its token table and its front end.
final class WhisperNetworks: Sendable {
    let model: WhisperModel
    let encoder: InferenceSession
    let decoder: InferenceSession
    let tokenizer: WhisperTokenizer
    let features: WhisperFeatures

    /// Loads `model` (checked by `WhisperModel`): the encoder on the process's shared compute threads (a window encoded
    /// alone uses every core: tiny.en's 30 s in 0.17 s on two instead of 0.29 s on one; windows encoded at once share
    /// them), the decoder on its caller's thread (a step is too small to share: the lanes decode pieces side by side).
    /// - Throws: `VoiceError` (`.configuration`) naming the file: unreadable, refused by the runtime, or with inputs
    ///   and outputs other than Chorus's converter gives.
    init(model: WhisperModel) throws {
        self.model = model
        let d = model.description
        let layers = 0..<d.n_text_layer
        let heads = d.n_text_head
        let width = d.n_text_state / d.n_text_head
        let crossPorts: [InferenceSession.Port] =
            layers.map { .float("cross_k_\($0)", [-1, heads, width, -1]) }
            + layers.map { .float("cross_v_\($0)", [-1, heads, -1, width]) }
        let (encoderBytes, decoderBytes) = (try Self.bytes(of: model.encoder), try Self.bytes(of: model.decoder))
        (encoder, decoder) = try VoiceError.inference("whisper") {
            let encoder = try InferenceSession(file: model.encoder, bytes: encoderBytes, threads: .shared, owner: "whisper")
            try encoder.expect(inputs: [.float("mel", [-1, d.n_mels, -1])], outputs: crossPorts)
            let decoder = try InferenceSession(file: model.decoder, bytes: decoderBytes, threads: .own(1), owner: "whisper")
            let step = [d.n_text_layer, -1, -1, d.n_text_state]
            try decoder.expect(
                inputs: [.int64("tokens", [-1, -1]), .int64("offset", [1])]
                    + d.cacheNames.map { .float($0, [-1, -1, d.n_text_state]) } + crossPorts,
                outputs: [
                    .float("logits", [-1, d.n_vocab]), .float("new_k", step), .float("new_v", step),
                    .float("alignment", [-1, d.alignment_heads.count, -1, -1]),
                ])
            return (encoder, decoder)
        }
        tokenizer = try WhisperTokenizer(url: model.tokens, endOfText: d.tokens.eot)
        features = WhisperFeatures(bands: d.n_mels)
        try trial()
    }

    /// Runs both networks once on 0.2 s of silence (a few milliseconds), so that a graph the runtime loads but cannot
    /// run, or whose outputs have other shapes than its description says, is refused when it is loaded — not at the
    /// first request.
    /// - Throws: `VoiceError` (`.configuration`) naming the model's folder and what failed.
    private func trial() throws {
        let d = model.description
        do {
            try VoiceError.inference("whisper") { try runOnce(d) }
        } catch let error as VoiceError where error.kind != .configuration {
            throw VoiceError.model("\(model.folder.path): the networks do not run (\(error.message))")
        }
    }

    /// Both networks run once on 0.2 s of silence, their outputs' shapes checked (`trial`).
    private func runOnce(_ d: WhisperModel.Description) throws {
        do {
            let mel = try Tensor<Float>(shape: [1, d.n_mels, 20])
            let cross = try encoder.run([("mel", mel)], outputs: d.crossNames)
            let cache = try Tensor<Float>(shape: [1, 2, d.n_text_state])
            let feeds: [(name: String, value: any TensorValue)] =
                [
                    ("tokens", try Tensor(shape: [1, 1], values: [Int64(d.tokens.sot)])),
                    ("offset", try Tensor(shape: [1], values: [Int64(0)])),
                ]
                + d.cacheNames.map { ($0, cache) } + zip(d.crossNames, cross).map { ($0, $1) }
            let out = try decoder.run(feeds, outputs: ["logits", "new_k", "new_v", "alignment"])
            let width = d.n_text_state / d.n_text_head
            guard cross.first?.shape == [1, d.n_text_head, width, 10], cross.last?.shape == [1, d.n_text_head, 10, width],
                out[0].shape == [1, d.n_vocab], out[1].shape == [d.n_text_layer, 1, 1, d.n_text_state],
                out[3].shape == [1, d.alignment_heads.count, 1, 10]
            else {
                throw VoiceError.model(
                    "\(model.folder.path): the networks give outputs of shapes \(cross.first?.shape ?? []), \(out[0].shape) and \(out[3].shape), not what model.json describes"
                )
            }
        }
    }

    /// The file's bytes, mapped (the runtime reads them once, and Chorus's checks read the same bytes).
    private static func bytes(of url: URL) throws -> Data {
        do {
            return try Data(contentsOf: url, options: .alwaysMapped)
        } catch {
            throw VoiceError.model("\(url.path): cannot be read")
        }
    }
}
