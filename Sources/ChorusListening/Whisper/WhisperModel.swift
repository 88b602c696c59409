public import ChorusInference
import ChorusSpeech
public import Foundation

/// A Whisper model as Chorus runs it: a folder holding `encoder.onnx`, `decoder.onnx`, `tokens.txt` and `model.json`,
/// converted from CTranslate2's format by `scripts/whisper_to_onnx.py` (set-up converts tiny.en into
/// `whisper-tiny.en` and base into `whisper-base`).
///
/// Opening one checks what Chorus reads before anything is loaded: `model.json`'s dimensions, token ids, languages and
/// alignment heads (each in range), both graphs complete ONNX files with the inputs and outputs Chorus feeds and reads,
/// and the token table. A model that fails is a `VoiceError` (`.configuration`) naming the file and the reason;
/// loading it (`WhisperRecognizer`) then checks the graphs' shapes as the runtime sees them.
public struct WhisperModel: Sendable, Equatable {
    /// The folder's name: how requests and `--model` name it.
    public let name: String
    public let folder: URL
    public var encoder: URL { folder.appendingPathComponent(Self.fileNames[0]) }
    public var decoder: URL { folder.appendingPathComponent(Self.fileNames[1]) }
    public var tokens: URL { folder.appendingPathComponent(Self.fileNames[2]) }
    public var descriptionFile: URL { folder.appendingPathComponent(Self.fileNames[3]) }
    /// The files of a model's folder, in the order `files` lists them.
    static let fileNames = ["encoder.onnx", "decoder.onnx", "tokens.txt", "model.json"]
    /// Whether it transcribes English only (`.en` models).
    public var isEnglishOnly: Bool { description.english_only }
    /// Mel bands of its input (80, or 128 for large-v3).
    public var melBands: Int { description.n_mels }
    /// The languages it transcribes (ISO 639-1 codes, sorted): `en` alone for English-only models.
    public var languages: [String] { isEnglishOnly ? ["en"] : description.languages.keys.sorted() }
    /// Every token it writes is timed (its alignment heads are known): always, for the models Chorus converts.
    public var timesTokens: Bool { !description.alignment_heads.isEmpty }
    let description: Description

    /// The converter revision this Chorus reads (`scripts/setup-speech.sh`'s `converter_revision`).
    public static let converterRevision = 10

    /// Its four files.
    public var files: [URL] { [encoder, decoder, tokens, descriptionFile] }

    /// Each file's name, size and modification time as they are now (`name size seconds.nanoseconds`; a missing file
    /// has size -1): what tells a model replaced or damaged in place from the one loaded, and part of a transcript's
    /// cache key.
    public var fileStamps: [String] { files.map(ModelFolder.stamp(of:)) }

    /// Its name and `fileStamps`: the model, as transcript cache keys name it.
    public var identity: [String] { [name] + fileStamps }

    /// The offline model renders and `chorus transcribe` use unless told (`scripts/setup-speech.sh` installs it).
    public static let defaultName = "whisper-tiny.en"

    /// The multilingual model set-up installs (99 languages, language detection).
    public static let multilingualName = "whisper-base"

    /// The model that hears `language` when `defaultModel` is asked to: `defaultModel` itself, unless it is English-only
    /// (a name ending `.en`) and the language is another (an ISO 639-1 code or English name, `es`, `spanish`) — then the
    /// multilingual model, when it is in `models`. The one rule by which renders, `chorus transcribe` and the service's
    /// `whisper-1` reach whisper-base for a Spanish voice note while English stays with tiny.en: measured on the human
    /// corpus, tiny.en hears English as well as base does (8.4 % and 8.6 % of words wrong with faster-whisper, the same
    /// weights) at half the cost (docs/benchmarks.md).
    public static func model(for language: String?, defaultModel: String = defaultName, in models: URL = ModelFolder.root()) -> String {
        guard defaultModel.hasSuffix(".en"), let language, LanguageNames.code(of: language) != "en",
            FileManager.default.fileExists(atPath: models.appendingPathComponent(multilingualName).appendingPathComponent("model.json").path)
        else {
            return defaultModel
        }
        return multilingualName
    }

    /// The names of the Whisper models in `folder` (sub-folders holding a `model.json` that says `whisper`), sorted;
    /// nothing else is validated.
    public static func names(in folder: URL = ModelFolder.root()) -> [String] {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
        return entries.filter { name in
            guard !name.hasPrefix("."),
                let data = FileManager.default.contents(atPath: folder.appendingPathComponent(name).appendingPathComponent("model.json").path),
                let kind = try? JSONDecoder().decode(Kind.self, from: data)
            else { return false }
            return kind.kind == "whisper"
        }.sorted()
    }

    private struct Kind: Decodable { var kind: String }

    /// Model `name` in `models`, checked.
    /// - Throws: `VoiceError` (`.configuration`): no such model (naming the folder and what is there, and how to
    ///   install the default), or a file that fails a check.
    public static func named(_ name: String, in models: URL = ModelFolder.root()) throws -> WhisperModel {
        guard !name.isEmpty, !name.contains("/"), name != ".", name != ".." else {
            throw VoiceError.model("\"\(name)\" is not a model name")
        }
        let folder = models.appendingPathComponent(name, isDirectory: true)
        guard FileManager.default.fileExists(atPath: folder.path) else {
            let present = names(in: models)
            throw VoiceError.model(
                "no model \"\(name)\" in \(models.path) (" + (present.isEmpty ? "none there" : "there: \(present.joined(separator: ", "))")
                    + (["whisper-tiny.en", "whisper-base"].contains(name) ? "; scripts/setup.sh installs it" : "") + ")")
        }
        return try WhisperModel(folder: folder)
    }

    /// The model in `folder`, checked.
    /// - Throws: `VoiceError` (`.configuration`) naming the file and the reason.
    public init(folder: URL) throws {
        self.folder = folder
        name = folder.lastPathComponent
        let descriptionFile = folder.appendingPathComponent("model.json")
        guard FileManager.default.fileExists(atPath: folder.path) else { throw VoiceError.model("\(folder.path): not a folder holding a model") }
        let data: Data
        do {
            data = try Data(contentsOf: descriptionFile)
        } catch {
            throw VoiceError.model(
                "\(descriptionFile.path): cannot be read (a Whisper model's folder holds model.json; scripts/setup.sh converts models)")
        }
        description = try Description.checked(data, file: descriptionFile)
        try VoiceError.inference("whisper") { [description] in
            let encoderFile = try ONNXModelFile(url: folder.appendingPathComponent("encoder.onnx"))
            try encoderFile.expect(inputs: ["mel"], outputs: description.crossNames, what: "a Whisper encoder converted by Chorus")
            let decoderFile = try ONNXModelFile(url: folder.appendingPathComponent("decoder.onnx"))
            try decoderFile.expect(
                inputs: ["tokens", "offset"] + description.cacheNames + description.crossNames, outputs: ["logits", "new_k", "new_v", "alignment"],
                what: "a Whisper decoder converted by Chorus")
        }
        let tokens = folder.appendingPathComponent("tokens.txt")
        guard FileManager.default.isReadableFile(atPath: tokens.path) else { throw VoiceError.model("\(tokens.path): missing or unreadable") }
    }
}

extension VoiceError {
    /// A model that cannot be used: missing, incomplete or not what it claims (`.configuration`).
    static func model(_ message: String) -> VoiceError { VoiceError(.configuration, provider: "whisper", message: message) }
}
