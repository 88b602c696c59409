public import ChorusWire

/// Word timings that match the text: every word of the message, in order, exactly once, spelled as
/// written (surrounding punctuation removed), whatever the engine reported.
///
/// Engines report *anchors* — a character offset in the text and the time speech reaches it — that
/// can be missing (espeak-ng joins unstressed function words to the next word), repeated (a number
/// read as several words) or misplaced. Each anchor is given to the word containing (or following) its
/// offset; the first anchor of a word is its start; anchors that would go back in the text or in time
/// are dropped. Words without an anchor share the time between their anchored neighbours in proportion
/// to their length. A word ends where the next begins, or at a pause (clause end) between them.
///
/// ```swift
/// let words = WordAligner.align("Out of milk.", anchors: [(0, 0.0), (7, 0.4)], pauses: [0.9], duration: 1.0)
/// // Out 0.0–0.2, of 0.2–0.4, milk 0.4–0.9
/// ```
public enum WordAligner {
    /// A word of the text and where it is, in characters (Unicode scalars) from the start.
    public struct TextWord: Equatable, Sendable {
        public var word: String
        public var range: Range<Int>
    }

    /// The words of `text`: whitespace-separated tokens with leading and trailing punctuation and symbols
    /// removed (`"$12.50,"` → `12.50`, `"don't"` stays), and with them what joins or varies emoji (a joiner, a
    /// variation selector: `❤️` and `👨‍👩‍👧` are no words); tokens of punctuation alone are not words.
    public static func words(in text: String) -> [TextWord] {
        let scalars = Array(text.unicodeScalars)
        var result: [TextWord] = []
        var index = 0
        func isTrimmed(_ scalar: Unicode.Scalar) -> Bool {
            switch scalar.properties.generalCategory {
            case .connectorPunctuation, .dashPunctuation, .openPunctuation, .closePunctuation, .initialPunctuation, .finalPunctuation,
                .otherPunctuation, .mathSymbol, .currencySymbol, .modifierSymbol, .otherSymbol:
                return true
            default:
                return scalar.value == 0x200D || (0xFE00...0xFE0F).contains(scalar.value)
            }
        }
        while index < scalars.count {
            while index < scalars.count && scalars[index].properties.isWhitespace { index += 1 }
            var end = index
            while end < scalars.count && !scalars[end].properties.isWhitespace { end += 1 }
            var first = index
            var last = end
            while first < last && isTrimmed(scalars[first]) { first += 1 }
            while last > first && isTrimmed(scalars[last - 1]) { last -= 1 }
            if first < last {
                result.append(TextWord(word: String(String.UnicodeScalarView(scalars[first..<last])), range: first..<last))
            }
            index = end
        }
        return result
    }

    /// Timings for every word of `text`.
    /// - Parameters:
    ///   - text: the words as written (each word once, in order, spelled as here).
    ///   - anchors: character offsets (0-based scalars) and the seconds at which speech reaches them, in order of time.
    ///   - pauses: seconds at which clauses end (silence follows until the next word).
    ///   - duration: length of the audio, seconds.
    public static func align(_ text: String, anchors: [(offset: Int, time: Double)], pauses: [Double], duration: Double) -> [WordTiming] {
        let words = words(in: text)
        guard !words.isEmpty else { return [] }
        var starts = [Double?](repeating: nil, count: words.count)
        var lastWord = -1
        var lastTime = 0.0
        for anchor in anchors {
            guard let word = words.firstIndex(where: { anchor.offset < $0.range.upperBound }) else { continue }
            guard word > lastWord, anchor.time >= lastTime, anchor.time <= duration else { continue }
            starts[word] = anchor.time
            lastWord = word
            lastTime = anchor.time
        }
        let sortedPauses = pauses.filter { $0 > 0 && $0 <= duration }.sorted()
        /// The first pause after `time` and no later than `limit`, else `limit`.
        func boundary(after time: Double, limit: Double) -> Double {
            sortedPauses.first { $0 > time && $0 <= limit } ?? limit
        }
        // Fill runs of words without anchors, sharing the time up to the next anchor (or pause) by length.
        var index = 0
        while index < words.count {
            guard starts[index] == nil else {
                index += 1
                continue
            }
            let runStart = index
            while index < words.count && starts[index] == nil { index += 1 }
            let previous = runStart > 0 ? runStart - 1 : nil
            let from = previous.flatMap { starts[$0] } ?? 0
            let until = index < words.count ? starts[index]! : boundary(after: from, limit: duration)
            let shared = (previous ?? runStart)..<index
            let end = previous == nil ? until : boundary(after: from, limit: until)
            let weights = shared.map { Double(max(1, words[$0].range.count)) }
            let total = weights.reduce(0, +)
            var position = from
            for (offset, word) in shared.enumerated() {
                if starts[word] == nil { starts[word] = position }
                position += (end - from) * weights[offset] / total
            }
        }
        return words.indices.map { index in
            let start = min(duration, starts[index]!)
            let next = index + 1 < words.count ? starts[index + 1]! : duration
            let end = max(start, min(next, boundary(after: start, limit: next)))
            return WordTiming(word: words[index].word, start: start, end: end)
        }
    }
}
