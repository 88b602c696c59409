import ChorusInference
public import Foundation

/// A Piper voice prepared for Chorus (`scripts/prepare_piper.py`, run by set-up): a folder in the Piper voices folder
/// holding `model.onnx` (the voice's graph with fixed noise and its phonemes' durations as a second output),
/// `tokens.txt` (its phoneme table) and `voice.json` (what Chorus lists and checks).
///
/// Opening one checks what Chorus reads before anything is loaded: a complete ONNX model with Chorus's metadata,
/// written by the preparation revision this Chorus knows, with Piper's inputs and the two outputs, and a token table
/// of `<symbol> <id>` lines. A voice that fails is a `VoiceError` (`.configuration`) naming the file and the reason;
/// loading it (`PiperSynthesizer`) checks the graph's inputs and outputs as the runtime sees them.
///
/// ```swift
/// let voice = try PiperVoice.named("en_US-joe-medium")
/// print(voice.sampleRate, voice.espeakVoice, voice.licence)
/// ```
public struct PiperVoice: Sendable, Equatable {
    /// The folder's name: the voice id after `piper:`.
    public let name: String
    public let folder: URL
    public var model: URL { folder.appendingPathComponent("model.onnx") }
    public var tokens: URL { folder.appendingPathComponent("tokens.txt") }
    public let sampleRate: Int
    /// The voice's language code (`en_US`).
    public let language: String
    /// The espeak-ng voice its phonemes come from (`en-us`).
    public let espeakVoice: String
    /// How many speakers the model has (ids 0 up to this).
    public let speakers: Int
    /// Speaker names of a multi-speaker model, by id.
    public let speakerNames: [String: Int]
    /// Piper's quality name (`low`, `medium`, `high`), or empty.
    public let quality: String
    /// What the voice's author says about its use, as set-up recorded it.
    public let licence: String
    /// The settings it was trained to be heard with (its config's `inference`).
    public let defaults: PiperSettings
    /// The SHA-256 of the `.onnx` it was prepared from: part of every clip's cache key.
    public let sourceDigest: String
    /// Whether its token table has `symbol` (phonemes it has not are left out of what it is given).
    func hasSymbol(_ symbol: Unicode.Scalar) -> Bool { ids[symbol] != nil }

    /// The phonemes of `phonemes` it has no token for, in order.
    func unknownSymbols(_ phonemes: String) -> [Unicode.Scalar] { phonemes.unicodeScalars.filter { !hasSymbol($0) } }

    /// The phonemes in its token table (others are left out of what it is given).
    public var symbols: Set<Unicode.Scalar> { Set(ids.keys) }
    /// Each phoneme's id in its table.
    let ids: [Unicode.Scalar: Int]

    /// The preparation revision this Chorus reads (`scripts/prepare_piper.py`'s `REVISION`).
    public static let revision = 3

    /// The voice set-up installs (`scripts/setup-speech.sh`).
    public static let defaultName = "en_US-joe-medium"

    /// What voice `name` sounds like, for the speakers of Piper's published English voices (`en_US-joe-medium`: its
    /// speaker, `joe`, is male); `nil` for others.
    static func sounds(of name: String) -> VoiceSound? {
        let parts = name.split(separator: "-")
        guard parts.count >= 2 else { return nil }
        let speaker = parts[1].lowercased()
        if femaleSpeakers.contains(speaker) { return .female }
        if maleSpeakers.contains(speaker) { return .male }
        return nil
    }

    /// The speakers of Piper's English voices (rhasspy/piper-voices), by how they sound.
    static let femaleSpeakers: Set = [
        "amy", "kathleen", "kristin", "lessac", "ljspeech", "hfc_female", "jenny_dioco", "alba", "southern_english_female", "cori",
    ]
    static let maleSpeakers: Set = [
        "joe", "ryan", "john", "kusal", "bryce", "danny", "norman", "hfc_male", "alan", "northern_english_male", "sam",
    ]

    /// Where Piper voices are: the `piper` folder of the models folder (`ModelFolder.root`).
    public static func voicesFolder(environment: [String: String] = ProcessInfo.processInfo.environment) -> URL {
        ModelFolder.root(environment: environment).appendingPathComponent("piper", isDirectory: true)
    }

    /// The names of the prepared voices in `folder` (sub-folders holding a `voice.json`), sorted; nothing is validated.
    public static func names(in folder: URL = voicesFolder()) -> [String] {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
        return entries.filter {
            !$0.hasPrefix(".") && FileManager.default.fileExists(atPath: folder.appendingPathComponent($0).appendingPathComponent("voice.json").path)
        }
        .sorted()
    }

    /// Piper voices put in `folder` (`NAME.onnx` with `NAME.onnx.json`) that set-up has not prepared yet.
    public static func unprepared(in folder: URL = voicesFolder()) -> [String] {
        let entries = Set((try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? [])
        let prepared = Set(names(in: folder))
        return entries.filter { $0.hasSuffix(".onnx") && entries.contains($0 + ".json") }
            .map { String($0.dropLast(5)) }.filter { !prepared.contains($0) }.sorted()
    }

    /// Voice `name` in `folder`, checked.
    /// - Throws: `VoiceError` (`.configuration`): no such voice (naming the folder, what is there and how to add one),
    ///   or a file that fails a check; `.voiceNotFound` for a name that cannot be a voice's.
    public static func named(_ name: String, in folder: URL = voicesFolder()) throws -> PiperVoice {
        guard !name.isEmpty, !name.contains("/"), !name.hasPrefix(".") else {
            throw VoiceError(.voiceNotFound, provider: "piper", message: "\"\(name)\" is not a Piper voice name")
        }
        let voiceFolder = folder.appendingPathComponent(name, isDirectory: true)
        guard FileManager.default.fileExists(atPath: voiceFolder.appendingPathComponent("voice.json").path) else {
            let present = names(in: folder)
            let waiting = unprepared(in: folder).contains(name)
            throw VoiceError(
                .voiceNotFound, provider: "piper",
                message: "no Piper voice \"\(name)\" in \(folder.path) ("
                    + (present.isEmpty ? "none there" : "there: \(present.joined(separator: ", "))")
                    + (waiting
                        ? "; \(name).onnx is there but not prepared: run scripts/setup.sh"
                        : "; put NAME.onnx and NAME.onnx.json there and run scripts/setup.sh") + ")")
        }
        return try PiperVoice(folder: voiceFolder)
    }

    /// The prepared voice in `folder`, checked.
    /// - Throws: `VoiceError` (`.configuration`) naming the file and the reason.
    public init(folder: URL) throws {
        self.folder = folder
        name = folder.lastPathComponent
        let description = folder.appendingPathComponent("voice.json")
        let info: VoiceFile
        do {
            info = try JSONDecoder().decode(VoiceFile.self, from: Data(contentsOf: description))
        } catch {
            throw Self.broken(
                "\(description.path): not a prepared voice's description (\(error is DecodingError ? "fields missing or of the wrong type" : "cannot be read")); run scripts/setup.sh"
            )
        }
        guard info.chorus_revision == Self.revision else {
            throw Self.broken(
                "\(folder.path): prepared by revision \(info.chorus_revision) of scripts/prepare_piper.py, this Chorus reads \(Self.revision); run scripts/setup.sh"
            )
        }
        guard (8_000...48_000).contains(info.sample_rate), (1...10_000).contains(info.speakers) else {
            throw Self.broken("\(description.path): sample rate \(info.sample_rate) or \(info.speakers) speakers out of range")
        }
        sampleRate = info.sample_rate
        language = info.language
        espeakVoice = info.espeak_voice
        speakers = info.speakers
        speakerNames = info.speaker_names ?? [:]
        quality = info.quality ?? ""
        licence = info.licence
        sourceDigest = info.source_sha256
        defaults = try PiperSettings(
            lengthScale: info.defaults.length_scale, noiseScale: info.defaults.noise_scale,
            noiseW: info.defaults.noise_w)

        let model = folder.appendingPathComponent("model.onnx")
        let tokens = folder.appendingPathComponent("tokens.txt")
        let graph = try VoiceError.inference("piper") { try ONNXModelFile(url: model) }
        let missing = graph.missing(
            ["chorus_piper", "n_speakers", "sample_rate", "chorus_revision"],
            integers: ["n_speakers", "sample_rate", "chorus_revision"])
        guard missing.isEmpty else {
            throw Self.broken(
                "\(model.path): not a Piper voice prepared for Chorus (metadata missing or wrong: \(missing.joined(separator: ", "))); run scripts/setup.sh"
            )
        }
        guard graph.metadata["sample_rate"] == String(sampleRate), graph.metadata["n_speakers"] == String(speakers),
            graph.metadata["chorus_revision"] == String(Self.revision)
        else {
            throw Self.broken("\(model.path): its metadata does not match \(description.lastPathComponent) (sample rate, speakers or revision)")
        }
        guard Array(graph.inputs.prefix(3)) == ["input", "input_lengths", "scales"], graph.outputs == ["output", "durations"] else {
            throw Self.broken(
                "\(model.path): not a prepared Piper graph (inputs \(graph.inputs.joined(separator: ", ")); outputs \(graph.outputs.joined(separator: ", ")))"
            )
        }
        ids = try Self.checkTokens(tokens)
    }

    /// The token table: lines of `<one character> <id>`, no character or id twice, Piper's pad, start and end there.
    /// - Returns: each character's id.
    private static func checkTokens(_ url: URL) throws -> [Unicode.Scalar: Int] {
        guard let text = try? String(contentsOf: url, encoding: .utf8) else { throw broken("\(url.path): cannot be read as UTF-8 text") }
        return try tokens(text, name: url.path)
    }

    /// A token table's text (`name` is what errors call it) read and checked.
    /// - Throws: `VoiceError` (`.configuration`) naming the line.
    package static func tokens(_ text: String, name: String) throws -> [Unicode.Scalar: Int] {
        var symbols = [Character: Int]()
        var ids = Set<Int>()
        for (index, line) in text.split(separator: "\n", omittingEmptySubsequences: true).enumerated() {
            guard line.count >= 3, let symbol = line.first, symbol.unicodeScalars.count == 1, line.dropFirst().first == " ",
                let id = Int(line.dropFirst(2)), (0..<100_000).contains(id), symbols[symbol] == nil, ids.insert(id).inserted
            else {
                throw broken("\(name): line \(index + 1) is not \"<symbol> <id>\" with a symbol and id of its own")
            }
            symbols[symbol] = id
        }
        guard ["_", "^", "$", " "].allSatisfy({ symbols[$0] != nil }) else {
            throw broken("\(name): lacks Piper's pad, start, end or space symbol")
        }
        return Dictionary(uniqueKeysWithValues: symbols.map { ($0.key.unicodeScalars.first!, $0.value) })
    }

    static func broken(_ message: String) -> VoiceError { VoiceError(.configuration, provider: "piper", message: message) }

    /// `voice.json` as `scripts/prepare_piper.py` writes it.
    private struct VoiceFile: Decodable {
        var sample_rate: Int
        var language: String
        var espeak_voice: String
        var speakers: Int
        var speaker_names: [String: Int]?
        var quality: String?
        var licence: String
        var source_sha256: String
        var chorus_revision: Int
        var defaults: Defaults

        struct Defaults: Decodable {
            var noise_scale: Double
            var length_scale: Double
            var noise_w: Double
        }
    }
}
