import ChorusInference
import ChorusListening
import ChorusSpeech
import Foundation

/// What Chorus itself reads of the model files it is given, in one place for the fuzzer (`FuzzTarget.model`): the ONNX
/// header walk (`ONNXModelFile`), Whisper's `model.json` and token table, a Piper voice's token table, and Kokoro's
/// voice files (NumPy archives and arrays) and vocabulary. Each takes any bytes and either reads them or throws its
/// layer's error naming `name` (`FuzzTarget.model`).
enum ModelFiles {
    /// The ONNX graph's inputs, outputs and metadata keys, read from `bytes`.
    static func onnx(_ bytes: Data, name: String) throws -> (inputs: [String], outputs: [String], metadata: [String]) {
        let file = try ONNXModelFile(data: bytes, url: URL(fileURLWithPath: name))
        return (file.inputs, file.outputs, file.metadata.keys.sorted())
    }

    /// Whisper's `model.json` checked: its languages and the number of its alignment heads.
    static func whisperDescription(_ bytes: Data, name: String) throws -> (languages: [String], heads: Int, vocabulary: Int) {
        let description = try WhisperModel.Description.checked(bytes, file: URL(fileURLWithPath: name))
        return (description.languages.keys.sorted(), description.alignment_heads.count, description.n_vocab)
    }

    /// Whisper's token table: how many of `ids` (below `endOfText`) have bytes, and the text of all of them.
    static func whisperTokens(_ text: String, endOfText: Int, name: String) throws -> (count: Int, text: String) {
        let tokenizer = try WhisperTokenizer(text: text, endOfText: endOfText, name: name)
        let ids = Array(0..<endOfText)
        let words = tokenizer.words(of: Array(ids.prefix(512)), language: "en")
        return (ids.filter { !tokenizer.bytes(of: $0).isEmpty }.count, words.map(\.text).joined())
    }

    /// A Piper voice's token table: its symbols.
    static func piperTokens(_ text: String, name: String) throws -> Int {
        try PiperVoice.tokens(text, name: name).count
    }

    /// A Kokoro voice file (`name` ending in `.npy` for one voice, else an archive): its voices.
    static func kokoroVoices(_ bytes: Data, name: String) throws -> Int {
        try KokoroVoices.read(bytes, file: URL(fileURLWithPath: name)).count
    }

    /// Kokoro's vocabulary: its symbols.
    static func kokoroVocabulary(_ bytes: Data, name: String) throws -> Int {
        try KokoroModel.vocabulary(bytes, file: URL(fileURLWithPath: name)).count
    }
}
