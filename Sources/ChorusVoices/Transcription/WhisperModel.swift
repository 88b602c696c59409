public import Foundation

/// A Whisper model in the form sherpa-onnx reads: a folder holding the encoder and decoder ONNX files and the
/// token table. Two layouts are found: set-up's (`encoder.onnx`, `decoder.onnx`, `tokens.txt`, `model.json`,
/// e.g. `whisper-tiny.en` converted by `scripts/whisper_to_sherpa.py`) and sherpa's published folders
/// (`tiny.en-encoder.int8.onnx`, `tiny.en-decoder.int8.onnx`, `tiny.en-tokens.txt`; int8 preferred).
///
/// Opening one checks everything sherpa-onnx would otherwise die on (it calls `exit()` on a missing metadata
/// entry): both files complete ONNX models, the metadata entries sherpa reads, the graphs' inputs and outputs,
/// and the token table. A model that fails is a `VoiceError` (`.configuration`) naming the file and the reason.
public struct WhisperModel: Sendable, Equatable {
    /// The folder's name: how requests and `--model` name it.
    public let name: String
    public let folder: URL
    public let encoder: URL
    public let decoder: URL
    public let tokens: URL
    /// Whether it transcribes English only (`.en` models).
    public let isEnglishOnly: Bool
    /// Mel bands of its input (80, or 128 for large-v3).
    public let melBands: Int
    /// Whether its decoder gives the alignment heads' cross-attention, from which sherpa times each token.
    public let timesTokens: Bool

    /// Its three files (encoder, decoder, tokens).
    public var files: [URL] { [encoder, decoder, tokens] }

    /// Each file's name, size and modification time as they are now (`name size seconds.nanoseconds`; a missing file
    /// has size -1): what tells a model replaced or damaged in place from the one loaded, and part of a transcript's
    /// cache key.
    public var fileStamps: [String] { files.map(Self.stamp(of:)) }

    /// What a model folder holds: each file's `stamp` (empty when there is no folder). A failed load is remembered
    /// with it, so a model put in place or mended is loaded again and an unchanged broken one is not.
    public static func contents(of folder: URL) -> [String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
        return names.sorted().map { stamp(of: folder.appendingPathComponent($0)) }
    }

    /// Its name and `fileStamps`: the model, as transcript cache keys name it.
    public var identity: [String] { [name] + fileStamps }

    /// A file's name, size and modification time (`name size seconds.nanoseconds`, `name -1` when it is missing).
    public static func stamp(of url: URL) -> String {
        var info = stat()
        guard stat(url.path, &info) == 0 else { return "\(url.lastPathComponent) -1" }
        return "\(url.lastPathComponent) \(info.st_size) \(info.st_mtim.tv_sec).\(info.st_mtim.tv_nsec)"
    }

    /// The offline model set-up prepares (`scripts/setup-speech.sh`).
    public static let defaultName = "whisper-tiny.en"

    /// The folder models are found in: `$CHORUS_MODELS_DIR`, else `$XDG_DATA_HOME/chorus/models`, else
    /// `~/.local/share/chorus/models`.
    public static func modelsFolder(environment: [String: String] = ProcessInfo.processInfo.environment) -> URL {
        if let folder = environment["CHORUS_MODELS_DIR"], !folder.isEmpty { return URL(fileURLWithPath: folder, isDirectory: true) }
        let data = environment["XDG_DATA_HOME"].flatMap { $0.isEmpty ? nil : URL(fileURLWithPath: $0, isDirectory: true) }
            ?? FileManager.default.homeDirectoryForCurrentUser.appendingPathComponent(".local/share", isDirectory: true)
        return data.appendingPathComponent("chorus/models", isDirectory: true)
    }

    /// The names of the Whisper models in `folder` (sub-folders holding an encoder, a decoder and tokens), sorted;
    /// nothing is validated.
    public static func names(in folder: URL = modelsFolder()) -> [String] {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
        return entries.filter { (try? files(in: folder.appendingPathComponent($0, isDirectory: true))) != nil }.sorted()
    }

    /// Model `name` in `models`, checked.
    /// - Throws: `VoiceError` (`.configuration`): no such model (naming the folder and what is there, and how to
    ///   install the default), or a file that fails a check.
    public static func named(_ name: String, in models: URL = modelsFolder()) throws -> WhisperModel {
        guard !name.isEmpty, !name.contains("/"), name != ".", name != ".." else {
            throw VoiceError.model("\"\(name)\" is not a model name")
        }
        let folder = models.appendingPathComponent(name, isDirectory: true)
        guard FileManager.default.fileExists(atPath: folder.path) else {
            let present = names(in: models)
            throw VoiceError.model("no model \"\(name)\" in \(models.path) (" + (present.isEmpty ? "none there" : "there: \(present.joined(separator: ", "))")
                                   + (name == defaultName ? "; scripts/setup.sh installs it" : "") + ")")
        }
        return try WhisperModel(folder: folder)
    }

    /// The model in `folder`, checked.
    /// - Throws: `VoiceError` (`.configuration`) naming the file and the reason.
    public init(folder: URL) throws {
        let (encoder, decoder, tokens) = try Self.files(in: folder)
        self.folder = folder
        name = folder.lastPathComponent
        self.encoder = encoder
        self.decoder = decoder
        self.tokens = tokens

        let encoderFile = try ONNXModelFile(url: encoder)
        let integers: Set<String> = ["n_mels", "n_text_layer", "n_text_ctx", "n_text_state", "n_vocab", "sot", "eot", "blank_id",
                                     "translate", "transcribe", "is_multilingual", "no_timestamps", "no_speech"]
        var required = Array(integers).sorted() + ["sot_sequence"]
        if encoderFile.metadata["is_multilingual"] == "1" { required += ["all_language_tokens", "all_language_codes"] }
        let missing = encoderFile.missing(required, integers: integers)
        guard missing.isEmpty else {
            throw VoiceError.model("\(encoder.path): not a Whisper encoder for sherpa-onnx (metadata missing or not a number: \(missing.joined(separator: ", ")))")
        }
        let sequence = encoderFile.metadata["sot_sequence", default: ""].split(separator: ",")
        guard !sequence.isEmpty, sequence.allSatisfy({ Int($0) != nil }) else {
            throw VoiceError.model("\(encoder.path): metadata sot_sequence is not a list of token ids")
        }
        guard encoderFile.inputs.count == 1, encoderFile.outputs.count == 2 else {
            throw VoiceError.model("\(encoder.path): a Whisper encoder takes 1 input and gives 2 outputs (cross keys and values); this one \(encoderFile.inputs.count) and \(encoderFile.outputs.count)")
        }
        let melBands = Int(encoderFile.metadata["n_mels"]!)!
        guard melBands == 80 || melBands == 128 else {
            throw VoiceError.model("\(encoder.path): \(melBands) mel bands (Whisper uses 80 or 128)")
        }
        self.melBands = melBands
        isEnglishOnly = encoderFile.metadata["is_multilingual"] == "0"

        let decoderFile = try ONNXModelFile(url: decoder)
        guard decoderFile.inputs.count == 6, (3...4).contains(decoderFile.outputs.count) else {
            throw VoiceError.model("\(decoder.path): a Whisper decoder takes 6 inputs and gives 3 or 4 outputs; this one \(decoderFile.inputs.count) and \(decoderFile.outputs.count)")
        }
        timesTokens = decoderFile.outputs.count == 4 && Int(encoderFile.metadata["n_alignment_heads"] ?? "") ?? 0 > 0

        try Self.checkTokens(tokens, vocabulary: Int(encoderFile.metadata["n_vocab"]!)!)
    }

    /// The encoder, decoder and token files in `folder`.
    private static func files(in folder: URL) throws -> (URL, URL, URL) {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
        guard !names.isEmpty else { throw VoiceError.model("\(folder.path): not a folder holding a model") }
        func pick(_ part: String, extension ext: String) throws -> URL {
            let preferred = [part + ext, "\(part).int8" + ext]
            if let exact = preferred.first(where: names.contains) { return folder.appendingPathComponent(exact) }
            let published = names.filter { $0.hasSuffix("-\(part).int8" + ext) } + names.filter { $0.hasSuffix("-\(part)" + ext) }
            guard let name = published.first else {
                throw VoiceError.model("\(folder.path): no \(part)\(ext) (nor *-\(part)\(ext))")
            }
            return folder.appendingPathComponent(name)
        }
        return (try pick("encoder", extension: ".onnx"), try pick("decoder", extension: ".onnx"), try pick("tokens", extension: ".txt"))
    }

    /// The token table: lines of `<base64 bytes> <id>`, ids below the vocabulary's size.
    private static func checkTokens(_ url: URL, vocabulary: Int) throws {
        let text: String
        do {
            text = try String(contentsOf: url, encoding: .utf8)
        } catch {
            throw VoiceError.model("\(url.path): cannot be read as text")
        }
        var count = 0
        for (index, line) in text.split(separator: "\n", omittingEmptySubsequences: true).enumerated() {
            let parts = line.split(separator: " ")
            guard parts.count == 2, let id = Int(parts[1]), (0..<vocabulary).contains(id), Data(base64Encoded: String(parts[0])) != nil else {
                throw VoiceError.model("\(url.path): line \(index + 1) is not \"<base64 token> <id below \(vocabulary)>\"")
            }
            count += 1
        }
        guard count >= 256 else { throw VoiceError.model("\(url.path): \(count) tokens (a Whisper table has over 50,000)") }
    }
}

extension VoiceError {
    /// A model that cannot be used: missing, incomplete or not what it claims (`.configuration`).
    static func model(_ message: String) -> VoiceError { VoiceError(.configuration, provider: "whisper", message: message) }
}
