import ChorusInference
public import ChorusWire
public import Foundation

/// What a voice Chorus made from recordings was made from (`chorus voices create`): kept beside its style file as
/// `NAME.made.json` in the Kokoro voices folder — digests, durations, models, the search and its scores, never the
/// recordings themselves.
public struct MadeVoiceRecord: Codable, Sendable, Equatable {
    /// One recording it was made from.
    public struct Source: Codable, Sendable, Equatable {
        /// The file's name (no folder).
        public var file: String
        public var sha256: String
        /// Seconds of audio, and of speech heard in it.
        public var seconds: Double
        public var speechSeconds: Double

        enum CodingKeys: String, CodingKey {
            case file, sha256, seconds
            case speechSeconds = "speech_seconds"
        }

        public init(file: String, sha256: String, seconds: Double, speechSeconds: Double) {
            self.file = file
            self.sha256 = sha256
            self.seconds = seconds
            self.speechSeconds = speechSeconds
        }
    }

    public var name: String
    /// How many people it was aimed at (1: a voice like one person's; more: the voice they share on average, which
    /// imitates none of them).
    public var people: Int
    /// "chorus": marks a made voice.
    public var madeBy: String
    /// ISO 8601 time it was made.
    public var created: String
    public var sources: [Source]
    /// "female" or "male": the hint given, else what its pitch says.
    public var sounds: String
    /// The language its scoring sentences were read in (espeak-ng's voice).
    public var language: String
    /// Median pitch of the person's speech and of the made voice, in hertz.
    public var personPitch: Double
    public var voicePitch: Double
    /// The speaker model's similarity of the made voice to the recordings, and the nearest stock voice's.
    public var similarity: Double
    public var nearestStock: String
    public var nearestStockSimilarity: Double
    /// Of the words of three sentences the voice read, those Whisper heard wrong (`nil`: no Whisper model to judge).
    public var wordErrorRate: Double?
    /// The search: its seed, candidates heard, seconds taken.
    public var seed: UInt64
    public var candidates: Int
    public var seconds: Double
    /// What the style is: `base` (a stock voice, or `a+b`, equal parts) with `offset` added to each of its rows.
    public var base: String
    public var offset: [Float]?
    /// The models: Kokoro's source digest, the speaker model's.
    public var kokoroModel: String
    public var speakerModel: String
    public var chorusVersion: String

    public init(
        name: String, people: Int, madeBy: String, created: String, sources: [Source], sounds: String, language: String,
        personPitch: Double, voicePitch: Double, similarity: Double, nearestStock: String, nearestStockSimilarity: Double,
        wordErrorRate: Double?, seed: UInt64, candidates: Int, seconds: Double, base: String, offset: [Float]?, kokoroModel: String,
        speakerModel: String, chorusVersion: String
    ) {
        self.name = name
        self.people = people
        self.madeBy = madeBy
        self.created = created
        self.sources = sources
        self.sounds = sounds
        self.language = language
        self.personPitch = personPitch
        self.voicePitch = voicePitch
        self.similarity = similarity
        self.nearestStock = nearestStock
        self.nearestStockSimilarity = nearestStockSimilarity
        self.wordErrorRate = wordErrorRate
        self.seed = seed
        self.candidates = candidates
        self.seconds = seconds
        self.base = base
        self.offset = offset
        self.kokoroModel = kokoroModel
        self.speakerModel = speakerModel
        self.chorusVersion = chorusVersion
    }

    enum CodingKeys: String, CodingKey {
        case name, people, sources, sounds, language, similarity, seed, candidates, seconds, base, offset
        case madeBy = "made_by", created, personPitch = "person_pitch_hz", voicePitch = "voice_pitch_hz"
        case nearestStock = "nearest_stock", nearestStockSimilarity = "nearest_stock_similarity", wordErrorRate = "word_error_rate"
        case kokoroModel = "kokoro_model_sha256", speakerModel = "speaker_model_sha256", chorusVersion = "chorus_version"
    }

    /// The style its recipe gives with the voices of `styles`: `base` (one voice, or voices blended in equal parts)
    /// with `offset` added to each row; `nil` when a voice of `base` is not there or the record has no offset.
    func style(from styles: [String: KokoroVoices.Style]) -> KokoroVoices.Style? {
        guard let offset, offset.count == KokoroModel.styleWidth, let blend = try? KokoroVoices.Blend(base),
            blend.parts.allSatisfy({ styles[$0.name] != nil })
        else { return nil }
        let base = try? KokoroVoices(styles: styles).style(of: blend)
        return base.map { KokoroVoices.Style(values: KokoroVoices.style(base: $0.values, offset: offset)) }
    }

    /// What voice lists and timelines say of it.
    public var info: MadeVoiceInfo {
        MadeVoiceInfo(
            madeBy: madeBy, created: created, people: people, recordings: sources.count,
            speechSeconds: sources.reduce(0) { $0 + $1.speechSeconds }, similarity: similarity,
            nearestStockSimilarity: nearestStockSimilarity, wordErrorRate: wordErrorRate)
    }

    /// One line for voice lists: `made by Chorus from 2 recordings (61 s of speech), 2026-12-07; similarity 0.83`.
    public var summary: String {
        let speech = sources.reduce(0) { $0 + $1.speechSeconds }
        let whom = people > 1 ? " of \(people) people" : ""
        return "made by Chorus from \(sources.count) recording\(sources.count == 1 ? "" : "s")\(whom) (\(Int(speech.rounded())) s of speech), "
            + "\(created.prefix(10)); \(sounds); similarity \(String(format: "%.2f", similarity)) (nearest stock voice "
            + "\(nearestStock) \(String(format: "%.2f", nearestStockSimilarity)))"
    }
}

/// The made voices of a Kokoro voices folder: each `NAME.npy` (the style, read by `KokoroVoices` as any voice file) with
/// `NAME.made.json` (`MadeVoiceRecord`) beside it. The one owner of their file names, of which names a made voice may
/// have, and of writing and removing them so that a voice is there whole or not at all.
public enum MadeVoices {
    static let recordSuffix = ".made.json"

    /// The record of voice `name` in `folder`, `nil` when it is not a made voice (or its record cannot be read).
    public static func record(of name: String, in folder: URL) -> MadeVoiceRecord? {
        guard let data = try? Data(contentsOf: folder.appendingPathComponent(name + recordSuffix)) else { return nil }
        return try? JSONDecoder().decode(MadeVoiceRecord.self, from: data)
    }

    /// The made voices among `voices` (ids; a Kokoro blend's made parts each), with what they were made from, by id
    /// (`kokoro:mom`): what a render's timeline lists. `folder` is the Kokoro folder of `kokoro:` voices.
    public static func used(in voices: [VoiceID], kokoro folder: URL) -> [String: MadeVoiceInfo] {
        let made = records(in: KokoroModel.voicesFolder(of: folder))
        guard !made.isEmpty else { return [:] }
        var result: [String: MadeVoiceInfo] = [:]
        for voice in voices where voice.provider == BuiltInProvider.kokoro.rawValue {
            for part in (try? KokoroVoices.Blend(String(voice.voice.prefix { $0 != "?" })))?.parts ?? [] {
                if let record = made[part.name] { result["kokoro:\(part.name)"] = record.info }
            }
        }
        return result
    }

    /// The made voices of `folder` (those whose style file and record are both there), by name, and Chorus's own
    /// English voices where the folder has them (`builtIn`).
    public static func records(in folder: URL) -> [String: MadeVoiceRecord] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
        var result: [String: MadeVoiceRecord] = [:]
        for file in names where file.hasSuffix(recordSuffix) && !file.hasPrefix(".") {
            let name = String(file.dropLast(recordSuffix.count))
            guard names.contains(name + ".npy"), let record = record(of: name, in: folder) else { continue }
            result[name] = record
        }
        let builtIn = self.builtIn.filter { result[$0.name] == nil && !names.contains($0.name + ".npy") }
        if !builtIn.isEmpty {
            let styles = KokoroVoices.of(folder: folder).styles
            for record in builtIn where styles[record.name] != nil { result[record.name] = record }
        }
        return result
    }

    /// Chorus's own English voices (`EnglishVoices`), as records: each made by `scripts/make_english_voices.py` from
    /// several people's recordings at once.
    public static let builtIn: [MadeVoiceRecord] = EnglishVoices.records.compactMap {
        try? JSONDecoder().decode(MadeVoiceRecord.self, from: Data($0.utf8))
    }

    /// Why `name` cannot be a new made voice in `folder`, `nil` when it can: 1–48 letters, digits, `_` and `-`
    /// starting with a letter, and no voice (or file) of that name yet.
    public static func problem(withName name: String, in folder: URL) -> String? {
        guard let first = name.first, first.isLetter, name.count <= 48,
            name.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_" || $0 == "-") })
        else { return "\"\(name)\" is not a voice name (1–48 letters, digits, _ and -, starting with a letter)" }
        if KokoroVoices.of(folder: folder).styles[name] != nil { return "a Kokoro voice named \"\(name)\" exists already" }
        for suffix in [".npy", recordSuffix] where FileManager.default.fileExists(atPath: folder.appendingPathComponent(name + suffix).path) {
            return "\(folder.appendingPathComponent(name + suffix).path) exists already"
        }
        return nil
    }

    /// Writes voice `name` (`style`: `KokoroModel.styleRows` × `styleWidth` numbers) and its record into `folder`:
    /// the record first, then the style (both written to a temporary name and renamed; the style's rename makes the
    /// voice), and neither is left behind when either fails.
    /// - Throws: `VoiceError` (`.badRequest` for a name that is taken or not a name, `.configuration` when the folder
    ///   cannot be written) naming the file.
    public static func install(name: String, style: [Float], record: MadeVoiceRecord, in folder: URL) throws {
        func failed(_ message: String, _ kind: VoiceError.Kind = .configuration) -> VoiceError {
            VoiceError(kind, provider: BuiltInProvider.kokoro.rawValue, message: message)
        }
        guard style.count == KokoroModel.styleRows * KokoroModel.styleWidth, style.allSatisfy(\.isFinite) else {
            throw failed("voice \"\(name)\": a style of \(style.count) numbers is not a Kokoro voice", .badRequest)
        }
        do {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        } catch {
            throw failed("\(folder.path): cannot be made (\(error.localizedDescription))")
        }
        if let problem = problem(withName: name, in: folder) { throw failed(problem, .badRequest) }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        let recordFile = folder.appendingPathComponent(name + recordSuffix)
        let styleFile = folder.appendingPathComponent(name + ".npy")
        do {
            try write(try encoder.encode(record), to: recordFile)
            try write(NumPyArchive.file(of: style, shape: [KokoroModel.styleRows, 1, KokoroModel.styleWidth]), to: styleFile)
        } catch {
            try? FileManager.default.removeItem(at: recordFile)
            throw failed("\(styleFile.path): cannot be written (\(error.localizedDescription))")
        }
    }

    /// Removes made voice `name` from `folder`: its style first (the voice is gone), then its record.
    /// - Throws: `VoiceError` (`.voiceNotFound` when `folder` has no made voice of that name).
    public static func remove(name: String, in folder: URL) throws {
        if record(of: name, in: folder) == nil, builtIn.contains(where: { $0.name == name }) {
            throw VoiceError(
                .badRequest, provider: BuiltInProvider.kokoro.rawValue,
                message: "\"\(name)\" is one of Chorus's own voices: it cannot be removed (a voice file of its name in \(folder.path) replaces it)")
        }
        guard problemFreeName(name), record(of: name, in: folder) != nil else {
            throw VoiceError(.voiceNotFound, provider: BuiltInProvider.kokoro.rawValue, message: "no made voice \"\(name)\"")
        }
        try? FileManager.default.removeItem(at: folder.appendingPathComponent(name + ".npy"))
        try? FileManager.default.removeItem(at: folder.appendingPathComponent(name + recordSuffix))
    }

    private static func problemFreeName(_ name: String) -> Bool {
        !name.isEmpty && name.count <= 48 && name.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_" || $0 == "-") }
    }

    /// `data` written to a hidden temporary file beside `file`, then renamed onto `file` (refusing to replace one).
    private static func write(_ data: Data, to file: URL) throws {
        let temporary = file.deletingLastPathComponent().appendingPathComponent(".\(file.lastPathComponent).\(UUID().uuidString).partial")
        defer { try? FileManager.default.removeItem(at: temporary) }
        try data.write(to: temporary)
        guard link(temporary.path, file.path) == 0 else {
            throw CocoaError(.fileWriteFileExists, userInfo: [NSFilePathErrorKey: file.path])
        }
    }
}
