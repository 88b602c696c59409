import ChorusSpeech
import ChorusWire
import Foundation

/// Whisper's tokens as bytes (`tokens.txt`: each ordinary token's bytes in base64 and its id), and how tokens make text
/// and words as OpenAI's Whisper makes them.
package struct WhisperTokenizer: Sendable {
    /// Each ordinary token's bytes, by id (empty for an id without bytes).
    private let bytes: [[UInt8]]
    /// Each ordinary token's id by its bytes: its rank when text is cut into tokens (a lower id is a merge made earlier).
    private let ids: [[UInt8]: Int]
    /// The first id that is not an ordinary token (end of text; the special tokens follow it).
    let endOfText: Int

    /// Reads `url`.
    /// - Throws: `VoiceError` (`.configuration`) naming the file and the line that is not `<base64 bytes> <id>` with an
    ///   id below `endOfText`, or a table too small to be Whisper's.
    init(url: URL, endOfText: Int) throws {
        let text: String
        do {
            text = try String(contentsOf: url, encoding: .utf8)
        } catch {
            throw VoiceError.model("\(url.path): cannot be read as text")
        }
        try self.init(text: text, endOfText: endOfText, name: url.path)
    }

    /// Reads a token table's text (`name` is what errors call it).
    package init(text: String, endOfText: Int, name: String) throws {
        guard endOfText > 0, endOfText <= 1_000_000 else { throw VoiceError.model("\(name): an end-of-text id of \(endOfText)") }
        var bytes = [[UInt8]](repeating: [], count: endOfText)
        var count = 0
        for (index, line) in text.split(separator: "\n", omittingEmptySubsequences: true).enumerated() {
            let parts = line.split(separator: " ")
            guard parts.count == 2, let id = Int(parts[1]), (0..<endOfText).contains(id), let data = Data(base64Encoded: String(parts[0])),
                !data.isEmpty, bytes[id].isEmpty
            else {
                throw VoiceError.model("\(name): line \(index + 1) is not \"<base64 token> <id below \(endOfText)>\" with an id of its own")
            }
            bytes[id] = Array(data)
            count += 1
        }
        guard count >= 256 else { throw VoiceError.model("\(name): \(count) tokens (a Whisper table has over 50,000)") }
        self.bytes = bytes
        self.endOfText = endOfText
        var ids: [[UInt8]: Int] = [:]
        ids.reserveCapacity(count)
        for (id, token) in bytes.enumerated() where !token.isEmpty { ids[token] = id }
        self.ids = ids
    }

    /// The bytes of `token` (none for special tokens).
    package func bytes(of token: Int) -> [UInt8] { token >= 0 && token < bytes.count ? bytes[token] : [] }

    /// `text` in tokens, as Whisper's own tokenizer writes it (GPT-2's byte-level BPE: the text cut into words, numbers,
    /// punctuation runs and spaces as its pattern cuts it, each piece's bytes merged pair by pair, always the pair whose
    /// token has the lowest id first). `nil` when the table lacks a token for a byte (no Whisper table does).
    func tokens(of text: String) -> [Int]? {
        var tokens: [Int] = []
        for piece in Self.pieces(of: text) {
            let bytes = Array(piece.utf8)
            if let whole = ids[bytes] {
                tokens.append(whole)
                continue
            }
            var parts = bytes.map { [$0] }
            while parts.count > 1 {
                var best: (id: Int, at: Int)?
                for index in 0..<(parts.count - 1) {
                    if let id = ids[parts[index] + parts[index + 1]], id < best?.id ?? .max { best = (id, index) }
                }
                guard let (_, at) = best else { break }
                parts[at] += parts[at + 1]
                parts.remove(at: at + 1)
            }
            for part in parts {
                guard let id = ids[part] else { return nil }
                tokens.append(id)
            }
        }
        return tokens
    }

    /// `text` cut as GPT-2's pattern cuts it before its pieces are merged into tokens:
    /// `'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+`.
    static func pieces(of text: String) -> [String] {
        enum Kind { case letter, number, space, other }
        func kind(_ scalar: Unicode.Scalar) -> Kind {
            switch scalar.properties.generalCategory {
            case .uppercaseLetter, .lowercaseLetter, .titlecaseLetter, .modifierLetter, .otherLetter: return .letter
            case .decimalNumber, .letterNumber, .otherNumber: return .number
            default: return scalar.properties.isWhitespace ? .space : .other
            }
        }
        let scalars = Array(text.unicodeScalars)
        var pieces: [String] = []
        var index = 0
        func take(_ end: Int) {
            pieces.append(String(String.UnicodeScalarView(scalars[index..<end])))
            index = end
        }
        func run(from start: Int, of wanted: Kind) -> Int {
            var end = start
            while end < scalars.count, kind(scalars[end]) == wanted { end += 1 }
            return end
        }
        while index < scalars.count {
            let scalar = scalars[index]
            if scalar == "'" {
                // Scalars, not characters: "'s" before a combining mark is still cut after the "s", as the pattern cuts it.
                let rest = scalars[(index + 1)..<min(scalars.count, index + 3)]
                let contractions: [[Unicode.Scalar]] = [["r", "e"], ["v", "e"], ["l", "l"], ["s"], ["t"], ["m"], ["d"]]
                if let suffix = contractions.first(where: { rest.starts(with: $0) }) {
                    take(index + 1 + suffix.count)
                    continue
                }
            }
            // An optional space, then a run of letters, numbers or other marks.
            let start = scalar == " " && index + 1 < scalars.count && kind(scalars[index + 1]) != .space ? index + 1 : index
            let first = kind(scalars[start])
            if first != .space {
                take(run(from: start, of: first))
                continue
            }
            // Spaces: all of them at the end of the text; else all but the last, which goes with what follows (a run
            // of one that is not a plain space before a word stands alone).
            let end = run(from: index, of: .space)
            take(end == scalars.count || end - index == 1 ? end : end - 1)
        }
        return pieces
    }

    /// The text of `tokens` (ordinary ones; bytes that are not UTF-8 become U+FFFD).
    func text(of tokens: [Int]) -> String {
        String(decoding: tokens.flatMap { bytes(of: $0) }, as: UTF8.self)
    }

    /// Languages written without spaces between words: their tokens are words where they end a character (OpenAI's
    /// `split_tokens_on_unicode`).
    static let unspaced: Set<String> = ["zh", "ja", "th", "lo", "my", "yue"]

    /// `tokens` cut into words, as OpenAI's `split_to_word_tokens` cuts them: a token starting with a space, or one that
    /// is punctuation alone, starts a word (for `unspaced` languages, every complete character does) — except that
    /// punctuation between two tokens without a space ("4", ":", "30"; "U", ".", "S") stays inside the word, where
    /// OpenAI's would make "4" and ":30" two words. Each word keeps its leading space.
    package func words(of tokens: [Int], language: String) -> [(text: String, tokens: Range<Int>)] {
        var words: [(text: String, tokens: Range<Int>)] = []
        var current: [UInt8] = []
        var start = 0
        func flush(at end: Int) {
            if end > start { words.append((String(decoding: current, as: UTF8.self), start..<end)) }
            current = []
            start = end
        }
        let unspaced = Self.unspaced.contains(language)
        for (index, token) in tokens.enumerated() {
            let piece = bytes(of: token)
            if unspaced {
                current += piece
                if String(validating: current, as: UTF8.self) != nil { flush(at: index + 1) }
                continue
            }
            let isPunctuation = Self.isPunctuation(piece)
            let inside =
                isPunctuation && piece.first != UInt8(ascii: " ") && !current.isEmpty && index + 1 < tokens.count
                && bytes(of: tokens[index + 1]).first.map { $0 != UInt8(ascii: " ") } == true && !Self.isPunctuation(bytes(of: tokens[index + 1]))
            if piece.first == UInt8(ascii: " ") || isPunctuation && !inside { flush(at: index) }
            current += piece
        }
        flush(at: tokens.count)
        return words
    }

    private static func isPunctuation(_ piece: [UInt8]) -> Bool {
        let text = String(decoding: piece, as: UTF8.self).trimmingCharacters(in: .whitespaces)
        return !text.isEmpty && text.allSatisfy { punctuation.contains($0) }
    }

    private static let punctuation = Set("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~")
    private static let opening = "\"'“¿([{-"
    private static let closing = "\"'.。,，!！?？:：”)]}、"

    /// OpenAI's `merge_punctuations` on timed words (each with its leading space): an opening mark alone after a space
    /// joins the word after it, a closing mark the word before; the word joined keeps its times.
    static func mergingPunctuation(_ words: [WordTiming]) -> [WordTiming] {
        var merged = words
        var index = merged.count - 2
        while index >= 0 {
            let word = merged[index].word
            if word.hasPrefix(" "), opening.contains(word.trimmingCharacters(in: .whitespaces)), !word.trimmingCharacters(in: .whitespaces).isEmpty {
                merged[index + 1].word = word + merged[index + 1].word
                merged.remove(at: index)
            }
            index -= 1
        }
        index = 1
        while index < merged.count {
            let word = merged[index].word
            if !merged[index - 1].word.hasSuffix(" "), !word.isEmpty, closing.contains(word) {
                merged[index - 1].word += word
                merged.remove(at: index)
            } else {
                index += 1
            }
        }
        return merged
    }
}
