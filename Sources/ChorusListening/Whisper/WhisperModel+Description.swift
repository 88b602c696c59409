import ChorusSpeech
package import Foundation

extension WhisperModel {
    /// `model.json` as `scripts/whisper_to_onnx.py` writes it: the dimensions, special tokens, languages, alignment
    /// heads and suppressed tokens (snake case, as written).
    package struct Description: Decodable, Sendable, Equatable {
        var kind: String
        var format: Int
        var converter_revision: Int
        var english_only: Bool
        var n_mels: Int
        var n_audio_ctx: Int
        var n_audio_state: Int
        var n_audio_head: Int
        var n_audio_layer: Int
        package var n_vocab: Int
        var n_text_ctx: Int
        var n_text_state: Int
        var n_text_head: Int
        var n_text_layer: Int
        package var alignment_heads: [[Int]]
        var tokens: Tokens
        package var languages: [String: Int]
        var suppress: [Int]

        struct Tokens: Decodable, Sendable, Equatable {
            var eot: Int
            var sot: Int
            var translate: Int
            var transcribe: Int
            var sot_lm: Int
            var sot_prev: Int
            var no_speech: Int
            var no_timestamps: Int
            var timestamp_begin: Int
        }

        /// The decoder's cache inputs, one per layer: every layer's keys, then every layer's values.
        var cacheNames: [String] { (0..<n_text_layer).map { "self_k_\($0)" } + (0..<n_text_layer).map { "self_v_\($0)" } }
        /// The encoder's outputs and the decoder's cross-attention inputs, one per layer: keys, then values.
        var crossNames: [String] { (0..<n_text_layer).map { "cross_k_\($0)" } + (0..<n_text_layer).map { "cross_v_\($0)" } }

        /// `data` (the file `file`) read and every value checked.
        /// - Throws: `VoiceError` (`.configuration`) naming the file and the field.
        package static func checked(_ data: Data, file: URL) throws -> Description {
            let description: Description
            do {
                description = try JSONDecoder().decode(Description.self, from: data)
            } catch let DecodingError.keyNotFound(key, context) {
                throw VoiceError.model(
                    "\(file.path): \((context.codingPath + [key]).map(\.stringValue).joined(separator: ".")) is missing (converted for an earlier Chorus? scripts/setup.sh converts it again)"
                )
            } catch let DecodingError.typeMismatch(_, context) {
                throw VoiceError.model("\(file.path): \(context.codingPath.map(\.stringValue).joined(separator: ".")) is not of the right type")
            } catch {
                throw VoiceError.model("\(file.path): not a Whisper model's description (not JSON of the expected shape)")
            }
            try description.check(file: file)
            return description
        }

        private func check(file: URL) throws {
            func refuse(_ field: String, _ reason: String) -> VoiceError { VoiceError.model("\(file.path): \(field) \(reason)") }
            guard kind == "whisper" else { throw refuse("kind", "is \"\(kind)\", not \"whisper\"") }
            guard format == 1, converter_revision == WhisperModel.converterRevision else {
                throw refuse(
                    "converter_revision",
                    "is \(converter_revision); this Chorus reads \(WhisperModel.converterRevision) (scripts/setup.sh converts the model again)")
            }
            guard n_mels == 80 || n_mels == 128 else { throw refuse("n_mels", "is \(n_mels) (Whisper uses 80 or 128)") }
            guard n_audio_ctx == 1500 else { throw refuse("n_audio_ctx", "is \(n_audio_ctx) (Whisper's 30 s window has 1500 frames)") }
            for (field, value, range) in [
                ("n_audio_layer", n_audio_layer, 1...64), ("n_text_layer", n_text_layer, 1...64),
                ("n_audio_head", n_audio_head, 1...64), ("n_text_head", n_text_head, 1...64),
                ("n_audio_state", n_audio_state, 1...8192), ("n_text_state", n_text_state, 1...8192),
                ("n_text_ctx", n_text_ctx, 16...4096), ("n_vocab", n_vocab, 512...1_000_000),
            ] {
                guard range.contains(value) else { throw refuse(field, "is \(value), outside \(range.lowerBound)…\(range.upperBound)") }
            }
            guard n_text_state % n_text_head == 0, n_audio_state % n_audio_head == 0 else { throw refuse("n_text_head", "does not divide the state") }
            let ids = Mirror(reflecting: tokens).children.compactMap { child in (child.value as? Int).map { (child.label ?? "", $0) } }
            for (name, id) in ids where !(0..<n_vocab).contains(id) {
                throw refuse("tokens.\(name)", "is \(id), not a token id below \(n_vocab)")
            }
            guard tokens.eot < tokens.sot, tokens.sot < tokens.timestamp_begin else { throw refuse("tokens", "are not in Whisper's order") }
            guard !alignment_heads.isEmpty,
                alignment_heads.allSatisfy({ $0.count == 2 && (0..<n_text_layer).contains($0[0]) && (0..<n_text_head).contains($0[1]) })
            else {
                throw refuse("alignment_heads", "are missing or name a layer or head the model lacks")
            }
            for (code, id) in languages {
                guard (2...3).contains(code.count), code.allSatisfy({ $0.isASCII && $0.isLowercase }) else {
                    throw refuse("languages", "has \"\(code)\", not a language code")
                }
                guard (tokens.sot..<tokens.translate).contains(id) else { throw refuse("languages.\(code)", "is \(id), not a language token") }
            }
            guard english_only == languages.isEmpty else {
                throw refuse("languages", english_only ? "are listed for an English-only model" : "are missing")
            }
            guard suppress.allSatisfy({ (0..<n_vocab).contains($0) }), suppress.count <= n_vocab else {
                throw refuse("suppress", "names tokens the model lacks")
            }
        }
    }
}
