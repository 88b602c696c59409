import Foundation

/// A Whisper model loaded: its encoder and decoder sessions (shared by every lane: the runtime lets several threads
/// run one session at once, and the weights are in memory once), its token table and its front end.
final class WhisperNetworks: Sendable {
    let model: WhisperModel
    let encoder: InferenceSession
    let decoder: InferenceSession
    let tokenizer: WhisperTokenizer
    let features: WhisperFeatures

    /// Loads `model` (checked by `WhisperModel`): the encoder with `encoderThreads` of the runtime's threads per call,
    /// the decoder with one (its steps are too small to share).
    /// - Throws: `VoiceError` (`.configuration`) naming the file: unreadable, refused by the runtime, or with inputs
    ///   and outputs other than Chorus's converter gives.
    init(model: WhisperModel, encoderThreads: Int) throws {
        self.model = model
        let d = model.description
        encoder = try InferenceSession(file: model.encoder, bytes: try Self.bytes(of: model.encoder), threads: encoderThreads, provider: "whisper")
        try encoder.expect(inputs: [.float("mel", [-1, d.n_mels, -1])],
                           outputs: [.float("cross_k", [d.n_text_layer, -1, -1, d.n_text_state]), .float("cross_v", [d.n_text_layer, -1, -1, d.n_text_state])])
        decoder = try InferenceSession(file: model.decoder, bytes: try Self.bytes(of: model.decoder), threads: 1, provider: "whisper")
        let cache = [d.n_text_layer, -1, -1, d.n_text_state]
        try decoder.expect(inputs: [.int64("tokens", [-1, -1]), .int64("offset", [1]), .float("self_k", cache), .float("self_v", cache),
                                    .float("cross_k", cache), .float("cross_v", cache)],
                           outputs: [.float("logits", [-1, d.n_vocab]), .float("new_k", cache), .float("new_v", cache),
                                     .float("alignment", [-1, d.alignment_heads.count, -1, -1])])
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
            let mel = try Tensor<Float>(shape: [1, d.n_mels, 20])
            let cross = try encoder.run([("mel", mel)], outputs: ["cross_k", "cross_v"])
            let cache = try Tensor<Float>(shape: [d.n_text_layer, 1, 2, d.n_text_state])
            let out = try decoder.run([("tokens", try Tensor(shape: [1, 1], values: [Int64(d.tokens.sot)])), ("offset", try Tensor(shape: [1], values: [Int64(0)])),
                                       ("self_k", cache), ("self_v", cache), ("cross_k", cross[0]), ("cross_v", cross[1])],
                                      outputs: ["logits", "new_k", "new_v", "alignment"])
            guard cross[0].shape == [d.n_text_layer, 1, 10, d.n_text_state], out[0].shape == [1, d.n_vocab],
                  out[1].shape == [d.n_text_layer, 1, 1, d.n_text_state], out[3].shape == [1, d.alignment_heads.count, 1, 10] else {
                throw VoiceError.model("\(model.folder.path): the networks give outputs of shapes \(cross[0].shape), \(out[0].shape) and \(out[3].shape), not what model.json describes")
            }
        } catch let error as VoiceError where error.kind != .configuration {
            throw VoiceError.model("\(model.folder.path): the networks do not run (\(error.message))")
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
