import ChorusInference
import ChorusSpeech
import Foundation

extension FuzzTarget {
    /// The bytes through every reader of model files Chorus owns (`ModelFiles`): each reads them or throws its layer's
    /// error for an unusable model — an `InferenceError` (`.model`) for the ONNX header, a `VoiceError`
    /// (`.configuration`) for the voices' and Whisper's files — whose message names the file; nothing else may happen.
    static func model(_ bytes: Data) {
        let name = "/models/fuzz/file"
        func refused(_ error: any Error, by reader: String) {
            if let error = error as? InferenceError {
                check(error.kind == .model && error.message.contains(name), "\(reader): \(error.kind) \(error.message)")
                return
            }
            guard let error = error as? VoiceError else { preconditionFailure("\(reader) threw \(type(of: error)): \(error)") }
            check(error.kind == .configuration && error.message.contains(name), "\(reader): \(error.kind) \(error.message)")
        }
        do {
            let graph = try ModelFiles.onnx(bytes, name: name)
            check(graph.inputs.count + graph.outputs.count <= bytes.count, "more ports than bytes")
        } catch {
            refused(error, by: "ONNXModelFile")
        }
        do {
            let description = try ModelFiles.whisperDescription(bytes, name: name)
            check(description.heads > 0 && description.vocabulary >= 512, "a description without heads or vocabulary was accepted")
        } catch {
            refused(error, by: "WhisperModel.Description")
        }
        let text = String(decoding: bytes, as: UTF8.self)
        let endOfText = bytes.first.map { 256 + Int($0) * 4 } ?? 256
        do {
            let tokens = try ModelFiles.whisperTokens(text, endOfText: endOfText, name: name)
            check(tokens.count >= 256 && tokens.count <= endOfText, "\(tokens.count) tokens accepted below \(endOfText)")
        } catch {
            refused(error, by: "WhisperTokenizer")
        }
        do {
            check(try ModelFiles.piperTokens(text, name: name) >= 4, "a Piper table without pad, start, end and space")
        } catch {
            refused(error, by: "PiperVoice.tokens")
        }
        for voiceFile in [name + ".npz", name + ".npy"] {
            do {
                check(try ModelFiles.kokoroVoices(bytes, name: voiceFile) >= 1, "a voice file without voices was accepted")
            } catch {
                refused(error, by: "KokoroVoices.read")
            }
        }
        do {
            check(try ModelFiles.kokoroVocabulary(bytes, name: name) >= 32, "a Kokoro vocabulary of fewer than 32 symbols")
        } catch {
            refused(error, by: "KokoroModel.vocabulary")
        }
    }
}
