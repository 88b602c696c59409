import ChorusInference
public import Foundation

/// The prepared Kokoro-82M model: the models folder's `kokoro/`, as `scripts/prepare_kokoro.py` writes it —
/// `model.onnx` (the graph with each token's duration as a second output), `vocab.json` (phoneme symbol → id) and
/// `model.json` (what was prepared from what) — and `voices/`, the voice files (`KokoroVoices`). The one owner of the
/// folder's names and of the model's constants.
public struct KokoroModel: Sendable, Equatable {
    /// What `scripts/prepare_kokoro.py` writes (its REVISION); another revision is prepared again by set-up.
    public static let revision = 1
    /// Samples a second of the model's audio.
    public static let sampleRate = 24_000
    /// Samples one duration frame makes (the decoder's hop, upsampled).
    public static let frameSamples = 600
    /// Style rows of a voice: one per token count, up to the model's 510-token window.
    public static let styleRows = 510
    /// Numbers in a style row.
    public static let styleWidth = 256
    /// The most phoneme tokens one call gets (the window less the two pads).
    public static let mostTokens = styleRows - 2

    public let folder: URL
    /// Phoneme symbol → token id.
    public let vocabulary: [Unicode.Scalar: Int64]
    /// The SHA-256 of the model it was prepared from (the cache key's).
    public let sourceDigest: String
    /// The file it was prepared from (`kokoro-v1.0.int8.onnx`, …).
    public let source: String
    public let licence: String

    public var model: URL { folder.appendingPathComponent("model.onnx") }
    public var voicesFolder: URL { Self.voicesFolder(of: folder) }

    /// The voices folder of Kokoro folder `folder` (whether or not its model is there).
    public static func voicesFolder(of folder: URL = KokoroModel.folder()) -> URL { folder.appendingPathComponent("voices", isDirectory: true) }

    /// The Kokoro folder of the models folder (`ModelFolder.root`).
    public static func folder(environment: [String: String] = ProcessInfo.processInfo.environment) -> URL {
        ModelFolder.root(environment: environment).appendingPathComponent("kokoro", isDirectory: true)
    }

    /// Reads and checks `folder`.
    /// - Throws: `VoiceError` (`.configuration`) naming the file and what is wrong with it.
    public init(folder: URL) throws {
        self.folder = folder
        let description = folder.appendingPathComponent("model.json")
        guard FileManager.default.fileExists(atPath: folder.appendingPathComponent("model.onnx").path) else {
            throw Self.broken("\(folder.path): no Kokoro model (model.onnx); run scripts/setup.sh")
        }
        guard let data = try? Data(contentsOf: description),
            let json = try? JSONSerialization.jsonObject(with: data) as? [String: Any]
        else { throw Self.broken("\(description.path): missing or not JSON; run scripts/setup.sh") }
        guard let revision = json["chorus_revision"] as? Int, revision == Self.revision else {
            throw Self.broken("\(description.path): prepared by another revision of scripts/prepare_kokoro.py; run scripts/setup.sh")
        }
        guard json["sample_rate"] as? Int == Self.sampleRate, json["frame_samples"] as? Int == Self.frameSamples,
            let digest = json["source_sha256"] as? String
        else { throw Self.broken("\(description.path): not a prepared Kokoro model's description") }
        sourceDigest = digest
        source = json["source"] as? String ?? "kokoro"
        licence = json["licence"] as? String ?? "not stated"
        vocabulary = try Self.vocabulary(folder.appendingPathComponent("vocab.json"))
    }

    /// A vocabulary file: a JSON object of single symbols to ids (kokoro-onnx's `{"vocab": {…}}` too).
    static func vocabulary(_ file: URL) throws -> [Unicode.Scalar: Int64] {
        guard let data = try? Data(contentsOf: file) else { throw broken("\(file.path): missing; run scripts/setup.sh") }
        return try vocabulary(data, file: file)
    }

    /// Vocabulary file `data` (`file`) read.
    package static func vocabulary(_ data: Data, file: URL) throws -> [Unicode.Scalar: Int64] {
        guard let json = try? JSONSerialization.jsonObject(with: data) else { throw broken("\(file.path): not JSON") }
        let table = ((json as? [String: Any])?["vocab"] as? [String: Any]) ?? (json as? [String: Any]) ?? [:]
        var result: [Unicode.Scalar: Int64] = [:]
        for (symbol, value) in table {
            guard symbol.unicodeScalars.count == 1, let scalar = symbol.unicodeScalars.first, let id = (value as? NSNumber)?.intValue,
                (1..<512).contains(id)
            else { throw broken("\(file.path): \"\(symbol)\" is not one symbol with an id from 1 to 511") }
            result[scalar] = Int64(id)
        }
        guard result.count >= 32 else { throw broken("\(file.path): \(result.count) symbols; not a Kokoro vocabulary") }
        return result
    }

    static func broken(_ message: String) -> VoiceError { VoiceError(.configuration, provider: BuiltInProvider.kokoro.rawValue, message: message) }
}
