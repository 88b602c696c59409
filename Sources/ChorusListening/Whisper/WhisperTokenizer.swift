import ChorusSpeech
import ChorusWire
import Foundation

/// Whisper's tokens as bytes (`tokens.txt`: each ordinary token's bytes in base64 and its id), and how tokens make text
/// and words as OpenAI's Whisper makes them.
package struct WhisperTokenizer: Sendable {
    /// Each ordinary token's bytes, by id (empty for an id without bytes).
    private let bytes: [[UInt8]]
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
    }

    /// The bytes of `token` (none for special tokens).
    package func bytes(of token: Int) -> [UInt8] { token >= 0 && token < bytes.count ? bytes[token] : [] }

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
