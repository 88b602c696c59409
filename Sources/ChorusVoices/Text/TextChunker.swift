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
            if ".!?…".contains(character) {
                while index + 1 < characters.count, "\"'”’)]".contains(characters[index + 1]) {
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
