import ChorusInference
import ChorusSupport
import ChorusWire
public import Foundation

/// The Kokoro voices of a voices folder: every `.npz` archive (kokoro-onnx's `voices-v1.0.bin` is one, whatever its
/// name ends in: `.bin` files are read as archives too) and every single-voice `.npy` file, each voice a float32 style
/// array of 510 rows of 256 (`[510, 1, 256]` or `[510, 256]`). A file that cannot be read is reported by name and
/// left out; the other files' voices are kept. Where two files hold a voice of the same name, the file sorted last wins.
/// Chorus's own English voices (`EnglishVoices`: `af_linden`, `af_wren`, `am_alder`, `am_rowan`) are voices of every
/// folder that has the voices they are made from (the Japanese pack's), unless a file has a voice of their name.
public struct KokoroVoices: Sendable {
    /// One voice's styles: a row per token count.
    public struct Style: Sendable, Equatable {
        /// `KokoroModel.styleRows` × `KokoroModel.styleWidth` numbers.
        let values: [Float]

        /// The row for a call of `tokens` phoneme tokens.
        func row(forTokens tokens: Int) -> [Float] {
            let row = min(max(tokens, 0), KokoroModel.styleRows - 1)
            return Array(values[(row * KokoroModel.styleWidth)..<((row + 1) * KokoroModel.styleWidth)])
        }
    }

    /// The voices by name.
    public let styles: [String: Style]
    /// Files that could not be read, each with why.
    public let problems: [String]

    /// Reads every voice file of `folder`.
    public init(folder: URL) {
        var styles: [String: Style] = [:]
        var problems: [String] = []
        let names = ((try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []).filter { !$0.hasPrefix(".") }.sorted()
        for name in names {
            let file = folder.appendingPathComponent(name)
            let kind = file.pathExtension.lowercased()
            guard ["npz", "bin", "npy"].contains(kind) else { continue }
            do {
                guard let data = try? Data(contentsOf: file, options: .mappedIfSafe) else { throw KokoroModel.broken("\(file.path): cannot be read") }
                styles.merge(try Self.read(data, file: file)) { _, later in later }
            } catch let error as VoiceError {
                problems.append(error.message)
            } catch {
                problems.append("\(file.path): \(error)")
            }
        }
        // Chorus's own English voices (`EnglishVoices`), where their base voices are here and no file has their name.
        for record in MadeVoices.builtIn where styles[record.name] == nil {
            if let style = record.style(from: styles) { styles[record.name] = style }
        }
        self.styles = styles
        self.problems = problems
    }

    /// A style made of `base` (`KokoroModel.styleRows` rows) with `offset` (one row) added to each of its rows: what a
    /// made voice is (`MadeVoiceRecord.base`, `.offset`).
    package static func style(base: [Float], offset: [Float]) -> [Float] {
        let width = offset.count
        return base.indices.map { base[$0] + offset[$0 % width] }
    }

    /// Voices already read.
    init(styles: [String: Style], problems: [String] = []) {
        self.styles = styles
        self.problems = problems
    }

    /// The voices of `folder`, read once and again only when its files change (`ModelFolder.contents`); shared by
    /// every caller in the process.
    public static func of(folder: URL) -> KokoroVoices {
        let stamp = ModelFolder.contents(of: folder)
        if let known = read.withLock({ $0[folder.path] }), known.stamp == stamp { return known.voices }
        let voices = KokoroVoices(folder: folder)
        read.withLock { $0[folder.path] = (stamp, voices) }
        return voices
    }

    private static let read = Locked<[String: (stamp: [String], voices: KokoroVoices)]>([:])

    /// The voices of voice file `data` (`file`: a `.npy` array is one voice named after the file, anything else is read
    /// as an archive of them).
    /// - Throws: `VoiceError` (`.configuration`) naming the file (and the member) and what is wrong.
    package static func read(_ data: Data, file: URL) throws -> [String: Style] {
        do {
            if file.pathExtension.lowercased() == "npy" {
                return [file.deletingPathExtension().lastPathComponent: try style(NumPyArchive.array(ofFile: data))]
            }
            let arrays = try NumPyArchive.arrays(ofArchive: data)
            guard !arrays.isEmpty else { throw NumPyArchive.Failure(description: "holds no voices (.npy members)") }
            var styles: [String: Style] = [:]
            for (voice, array) in arrays {
                do {
                    styles[voice] = try style(array)
                } catch let failure as NumPyArchive.Failure {
                    throw NumPyArchive.Failure(description: "\(voice): \(failure.description)")
                }
            }
            return styles
        } catch let failure as NumPyArchive.Failure {
            throw KokoroModel.broken("\(file.path): \(failure.description)")
        }
    }

    private static func style(_ array: NumPyArchive.Array) throws -> Style {
        let rows = KokoroModel.styleRows
        let width = KokoroModel.styleWidth
        guard array.shape == [rows, 1, width] || array.shape == [rows, width] else {
            throw NumPyArchive.Failure(
                description: "shape \(array.shape.map(String.init).joined(separator: "×")); a Kokoro voice is \(rows)×1×\(width)")
        }
        return Style(values: array.values)
    }

    /// What a voice's name says of it by Kokoro's convention: its first letter the language (`a` American English,
    /// `b` British English, `e` Spanish, `f` French, `h` Hindi, `i` Italian, `j` Japanese, `p` Brazilian Portuguese,
    /// `z` Mandarin), its second `f` female or `m` male, then `_`.
    public struct Kind: Sendable, Equatable {
        /// The language's name, `nil` when the name does not follow the convention.
        public var language: String?
        /// The espeak-ng voice its phonemes are read with unless a request says another.
        public var espeakVoice: String
        /// "female", "male", or `nil`.
        public var sounds: String?
    }

    /// Languages by a voice name's first letter: name and espeak-ng voice. The Japanese and Mandarin voices read with
    /// English phonemes unless told otherwise: Chorus's texts are English unless a conversation says, and espeak-ng
    /// reads neither language's usual writing well (the Japanese pack's five voices were measured reading English).
    static let languages: [Character: (name: String, espeak: String)] = [
        "a": ("American English", "en-us"), "b": ("British English", "en-gb"), "e": ("Spanish", "es"), "f": ("French", "fr-fr"),
        "h": ("Hindi", "hi"), "i": ("Italian", "it"), "j": ("Japanese", "en-us"), "p": ("Brazilian Portuguese", "pt-br"),
        "z": ("Mandarin", "en-us"),
    ]

    public static func kind(of name: String) -> Kind {
        let letters = Array(name)
        guard letters.count > 3, letters[2] == "_", let language = languages[letters[0]] else {
            return Kind(language: nil, espeakVoice: "en-us", sounds: nil)
        }
        let sounds: String? = letters[1] == "f" ? "female" : letters[1] == "m" ? "male" : nil
        return Kind(language: language.name, espeakVoice: language.espeak, sounds: sounds)
    }

    /// What voice `voice` (a name or a blend, with or without its `?` settings) sounds like by its names' prefixes:
    /// the sound of more than half its weight, `nil` when none has it.
    static func sounds(of voice: String) -> VoiceSound? {
        guard let blend = try? Blend(String(voice.prefix { $0 != "?" })) else { return nil }
        var weights: [VoiceSound: Double] = [:]
        for part in blend.parts {
            if let sounds = kind(of: part.name).sounds.flatMap(VoiceSound.init(rawValue:)) { weights[sounds, default: 0] += part.weight }
        }
        return weights.first { $0.value > 0.5 }?.key
    }

    /// The voices of `names` that speakers without a voice get, in order: those that read English (`kind(of:)`), the
    /// English ones first (Kokoro's best-graded first, `preferred`, then Chorus's own and the others by name), then
    /// those that read it with an accent (the Japanese pack's in the order they were best understood,
    /// docs/benchmarks.md, then the others by name).
    package static func defaultOrder(of names: [String]) -> [String] {
        let english = names.filter { kind(of: $0).espeakVoice.hasPrefix("en") }
        let native = english.filter { kind(of: $0).language?.hasSuffix("English") == true }
        func ordered(_ group: [String]) -> [String] { preferred.filter(group.contains) + group.filter { !preferred.contains($0) }.sorted() }
        return ordered(native) + ordered(english.filter { !native.contains($0) })
    }

    /// Kokoro's voices heard as the best of their kind, first among the defaults when installed: the English voices
    /// Kokoro's author grades highest, then the Japanese pack's, best understood reading English first (Whisper's
    /// words wrong over 50 messages, docs/benchmarks.md: gongitsune 2.0 %, nezumi 2.9 %, kumo 2.8 %, tebukuro 7.1 %,
    /// alpha 12.6 %).
    static let preferred = [
        "af_heart", "af_bella", "am_michael", "am_fenrir", "af_nicole", "bf_emma", "bm_george",
        "jf_gongitsune", "jf_nezumi", "jm_kumo", "jf_tebukuro", "jf_alpha",
    ]

    /// Blends that give a large group more natural voices: of the first four voices of each sound in `ordered`, the
    /// first with the second and the third with the fourth (`a+b`: equal parts).
    package static func defaultBlends(of ordered: [String]) -> [String] {
        var blends: [String] = []
        for sound in VoiceSound.allCases {
            let voices = Array(ordered.filter { sounds(of: $0) == sound }.prefix(4))
            for pair in stride(from: 0, to: voices.count - 1, by: 2) { blends.append("\(voices[pair])+\(voices[pair + 1])") }
        }
        return blends
    }

    /// A voice as written: one name, or a blend as Kokoro-FastAPI writes them (`af_bella+af_sky` in equal parts,
    /// `af_bella(2)+af_sky(1)` weighted), its weights summing to 1.
    public struct Blend: Sendable, Equatable {
        public var parts: [(name: String, weight: Double)]

        public static func == (lhs: Blend, rhs: Blend) -> Bool {
            lhs.parts.map(\.name) == rhs.parts.map(\.name) && lhs.parts.map(\.weight) == rhs.parts.map(\.weight)
        }

        /// Reads `text`.
        /// - Throws: `VoiceError` (`.badRequest`) naming what is wrong.
        public init(_ text: String) throws {
            func bad(_ reason: String) -> VoiceError {
                VoiceError(.badRequest, provider: BuiltInProvider.kokoro.rawValue, message: "voice \"\(text)\": \(reason)")
            }
            var parts: [(name: String, weight: Double)] = []
            for piece in text.split(separator: "+", omittingEmptySubsequences: false) {
                var name = piece.trimmingCharacters(in: .whitespaces)
                var weight = 1.0
                if name.hasSuffix(")"), let open = name.firstIndex(of: "(") {
                    let number = name[name.index(after: open)..<name.index(before: name.endIndex)]
                    guard let value = Double(number), value.isFinite, value > 0, value <= 1_000 else {
                        throw bad("the weight \"\(number)\" is not a number above 0 (at most 1000)")
                    }
                    weight = value
                    name = String(name[..<open]).trimmingCharacters(in: .whitespaces)
                }
                guard !name.isEmpty, name.count <= 64, name.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "_" || $0 == "-" || $0 == "." })
                else { throw bad("\"\(piece)\" is not a voice name") }
                parts.append((name, weight))
            }
            guard parts.count <= 8 else { throw bad("\(parts.count) voices blended (at most 8)") }
            let total = parts.reduce(0) { $0 + $1.weight }
            self.parts = parts.map { ($0.name, $0.weight / total) }
        }
    }

    /// The style of `blend`: its voices' styles, weighted.
    /// - Throws: `VoiceError` naming a voice the folder does not have (`.badRequest`) — or, when a voice file of the
    ///   folder could not be read, that file and what is wrong with it (`.configuration`): the voice may be in it.
    func style(of blend: Blend) throws -> Style {
        var values = [Float](repeating: 0, count: KokoroModel.styleRows * KokoroModel.styleWidth)
        for part in blend.parts {
            guard let style = styles[part.name] else {
                let known = styles.keys.sorted()
                let missing = "no Kokoro voice \"\(part.name)\" (known: \(known.isEmpty ? "none" : known.joined(separator: ", ")))"
                guard problems.isEmpty else {
                    throw VoiceError(
                        .configuration, provider: BuiltInProvider.kokoro.rawValue,
                        message: "\(missing); a voice file could not be read: \(problems.joined(separator: "; "))")
                }
                throw VoiceError(.badRequest, provider: BuiltInProvider.kokoro.rawValue, message: missing)
            }
            let weight = Float(part.weight)
            for index in values.indices { values[index] += weight * style.values[index] }
        }
        return Style(values: values)
    }
}
