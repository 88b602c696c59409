import Foundation

/// Splits text that is too long for one request: at sentence boundaries, packing whole sentences
/// into chunks within the limit; a sentence longer than the limit is split between words; a "word"
/// longer than the limit is cut.
///
/// ```swift
/// TextChunker.chunks("One. Two! Three?", limit: 10)   // ["One. Two!", "Three?"]
/// ```
public enum TextChunker {
    public static func chunks(_ text: String, limit: Int) -> [String] {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard trimmed.count > limit, limit > 0 else { return trimmed.isEmpty ? [] : [trimmed] }
        var pieces: [String] = []
        for sentence in sentences(trimmed) {
            if sentence.count <= limit {
                pieces.append(sentence)
            } else {
                pieces += pack(
                    sentence.split(whereSeparator: \.isWhitespace).flatMap { word -> [String] in
                        word.count <= limit
                            ? [String(word)]
                            : stride(from: 0, to: word.count, by: limit).map { start in
                                String(word.dropFirst(start).prefix(limit))
                            }
                    }, limit: limit)
            }
        }
        return pack(pieces, limit: limit)
    }

    /// The words of `text` up to its first clause or sentence end (`,` `;` `:` or `.` `!` `?` `…` followed by
    /// whitespace), and the rest, when both have words and the first has at most `mostWords`: what is spoken first when
    /// a stream's first audio should come soon (`"Running late, practice moved to four."` → `"Running late,"` and
    /// `"practice moved to four."`). `nil` for text with markup (SSML, `[pause:…]`, `[[IPA]]`: cut, it would not read).
    /// A period that may end an abbreviation is passed over: after a capitalized word of four letters or fewer (`Dr.`,
    /// `Mrs.`, `"St.`), a word with periods inside (`p.m.`, `e.g.`, `U.S.A.`) or one the normalizer expands (`vs.`).
    public static func firstClause(_ text: String, mostWords: Int = 12) -> (first: String, rest: String, endsSentence: Bool)? {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !trimmed.contains(where: { "<>[]{}".contains($0) }) else { return nil }
        let characters = Array(trimmed)
        var words = 0
        var inWord = false
        for (index, character) in characters.enumerated() {
            if character.isWhitespace {
                inWord = false
                continue
            }
            if !inWord && (character.isLetter || character.isNumber) {
                inWord = true
                words += 1
                if words > mostWords { return nil }
            }
            guard words > 0, Punctuation.clauseEnds.contains(character), index + 1 < characters.count, characters[index + 1].isWhitespace else {
                continue
            }
            if character == "." {
                // The word before the period, without the quotes or brackets it opens with.
                let word = String(characters[..<index].reversed().prefix { !$0.isWhitespace }.reversed().drop { !$0.isLetter && !$0.isNumber })
                let abbreviated =
                    word.contains(".") || EnglishRules.abbreviations[word.lowercased()] != nil
                    || (word.first?.isUppercase == true && word.count <= 4)
                if abbreviated { continue }
            }
            let first = String(characters[...index])
            let rest = String(characters[(index + 1)...]).trimmingCharacters(in: .whitespacesAndNewlines)
            guard rest.contains(where: { $0.isLetter || $0.isNumber }) else { return nil }
            return (first, rest, Punctuation.sentenceEnds.contains(character))
        }
        return nil
    }

    /// Greedily joins pieces with spaces while the result stays within `limit`.
    static func pack(_ pieces: [String], limit: Int) -> [String] {
        var chunks: [String] = []
        var current = ""
        for piece in pieces {
            if current.isEmpty {
                current = piece
            } else if current.count + 1 + piece.count <= limit {
                current += " " + piece
            } else {
                chunks.append(current)
                current = piece
            }
        }
        if !current.isEmpty { chunks.append(current) }
        return chunks
    }

    /// Sentences: text up to `.`, `!`, `?`, `…` (with closing quotes or brackets) followed by whitespace, or a line break.
    static func sentences(_ text: String) -> [String] {
        var sentences: [String] = []
        var current = ""
        let characters = Array(text)
        var index = 0
        while index < characters.count {
            let character = characters[index]
            current.append(character)
            var end = character.isNewline
            if Punctuation.sentenceEnds.contains(character) {
                while index + 1 < characters.count, Punctuation.closers.contains(characters[index + 1]) {
                    index += 1
                    current.append(characters[index])
                }
                end = index + 1 >= characters.count || characters[index + 1].isWhitespace
            }
            if end {
                let sentence = current.trimmingCharacters(in: .whitespacesAndNewlines)
                if !sentence.isEmpty { sentences.append(sentence) }
                current = ""
            }
            index += 1
        }
        let rest = current.trimmingCharacters(in: .whitespacesAndNewlines)
        if !rest.isEmpty { sentences.append(rest) }
        return sentences
    }
}
