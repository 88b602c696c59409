import ChorusText
public import ChorusWire
import Foundation

extension Transcript {
    /// Times for every word of `text` (the words known to be spoken in this audio), each exactly once, in order,
    /// spelled as written — even where the recognizer misheard, skipped or added words. The recognized words are
    /// matched to the text's by edit distance over words (a misheard word matched in place of the written one
    /// keeps its time); matched words anchor `WordAligner`, which shares the time between anchors among the words
    /// without one, and pauses (silences of `pause` seconds or more between recognized words) end clauses.
    ///
    /// ```swift
    /// let transcript = try await recognizer.transcribe(samples)   // "the quick brown box"
    /// let words = transcript.aligned(to: "The quick brown fox.")  // The, quick, brown, fox: "fox" at "box"'s time
    /// ```
    public func aligned(to text: String, pause: Double = 0.25) -> [WordTiming] {
        let written = WordAligner.words(in: text)
        guard !written.isEmpty else { return [] }
        let heard = words
        let pairs = Self.matches(written.map { Self.key($0.word) }, heard.map { Self.key($0.word) })
        let anchors = pairs.map { (offset: written[$0.written].range.lowerBound, time: heard[$0.heard].start) }
        var pauses: [Double] = []
        for (word, next) in zip(heard, heard.dropFirst()) where next.start - word.end >= pause { pauses.append(word.end) }
        if let last = heard.last, duration - last.end >= pause { pauses.append(last.end) }
        return WordAligner.align(text, anchors: anchors, pauses: pauses, duration: duration)
    }

    /// `text` (the words spoken in `samples`, the audio this transcript is of) as a transcription: its words timed by
    /// `aligned(to:)` and sharpened against the audio (`SpeechOnsets`), its sentences as segments, its text as given
    /// (whitespace runs made one space).
    public func alignment(of text: String, samples: [Float], rate: Int) -> Transcription {
        let words = SpeechOnsets.refine(aligned(to: text), samples: samples, rate: rate)
        return Transcription(
            language: LanguageNames.name(of: language), duration: duration,
            text: text.split(whereSeparator: \.isWhitespace).joined(separator: " "),
            words: words, segments: Self.sentences(of: text, words: words))
    }

    /// The sentences of `text` as segments, timed by `words` (what `aligned(to:)` gave for the same text: one timing per
    /// word of it). A sentence ends after a word followed by `.`, `?`, `!` or `…` (before the next word); its text is
    /// the text's own, punctuation included.
    public static func sentences(of text: String, words timings: [WordTiming]) -> [Transcription.Segment] {
        let written = WordAligner.words(in: text)
        guard written.count == timings.count, !written.isEmpty else { return Transcription.segments(of: timings) }
        let scalars = Array(text.unicodeScalars)
        var segments: [Transcription.Segment] = []
        var first = 0
        for index in written.indices {
            let after = written[index].range.upperBound
            let until = index + 1 < written.count ? written[index + 1].range.lowerBound : scalars.count
            let ends = scalars[after..<until].contains { ".?!…".unicodeScalars.contains($0) }
            guard ends || index == written.count - 1 else { continue }
            var piece = String(String.UnicodeScalarView(scalars[written[first].range.lowerBound..<until]))
            piece = piece.split(whereSeparator: \.isWhitespace).joined(separator: " ")
            segments.append(Transcription.Segment(id: segments.count, start: timings[first].start, end: timings[index].end, text: piece))
            first = index + 1
        }
        return segments
    }

    /// A word as compared: lower case letters and digits.
    static func key(_ word: String) -> String {
        String(word.lowercased().unicodeScalars.filter { CharacterSet.alphanumerics.contains($0) }.map(Character.init))
    }

    /// The pairs (written index, heard index) of a least-cost alignment of the two word lists (Levenshtein over
    /// words: a match costs 0, a substitution 1, or less for similar spellings, a skipped word 1), matches and
    /// substitutions only, in order. Memory is one byte per pair of words (a few MB for ten minutes of speech).
    static func matches(_ writtenWords: [String], _ heardWords: [String]) -> [(written: Int, heard: Int)] {
        // Each word's letters once, not once per pair of words.
        let written = writtenWords.map { Array($0.unicodeScalars) }
        let heard = heardWords.map { Array($0.unicodeScalars) }
        let n = written.count
        let m = heard.count
        guard n > 0, m > 0 else { return [] }
        var rows = ([Int](), [Int]())
        // 0: diagonal (match or substitution), 1: skip a written word, 2: skip a heard word.
        var moves = [UInt8](repeating: 0, count: (n + 1) * (m + 1))
        var previous = (0...m).map(Double.init)
        for j in 1...m { moves[j] = 2 }
        var current = [Double](repeating: 0, count: m + 1)
        for i in 1...n {
            current[0] = Double(i)
            moves[i * (m + 1)] = 1
            for j in 1...m {
                let substitution = previous[j - 1] + Self.difference(written[i - 1], heard[j - 1], rows: &rows)
                let skipWritten = previous[j] + 1
                let skipHeard = current[j - 1] + 1
                if substitution <= skipWritten && substitution <= skipHeard {
                    current[j] = substitution
                    moves[i * (m + 1) + j] = 0
                } else if skipWritten <= skipHeard {
                    current[j] = skipWritten
                    moves[i * (m + 1) + j] = 1
                } else {
                    current[j] = skipHeard
                    moves[i * (m + 1) + j] = 2
                }
            }
            swap(&previous, &current)
        }
        var pairs: [(Int, Int)] = []
        var i = n
        var j = m
        while i > 0 && j > 0 {
            switch moves[i * (m + 1) + j] {
            case 0:
                pairs.append((i - 1, j - 1))
                i -= 1
                j -= 1
            case 1: i -= 1
            default: j -= 1
            }
        }
        return pairs.reversed()
    }

    /// 0 for the same word, up to 0.9 for different spellings by their letters' edit distance: a substitution is
    /// always cheaper than skipping a word on each side, and "jumps" for "jump" cheaper than "dog" for "fox".
    /// `rows` is scratch space the caller keeps between calls (no allocation per pair of words).
    static func difference(_ x: [Unicode.Scalar], _ y: [Unicode.Scalar], rows: inout ([Int], [Int])) -> Double {
        if x == y { return 0 }
        guard !x.isEmpty, !y.isEmpty, x.count <= 64, y.count <= 64 else { return 0.9 }
        rows.0.removeAll(keepingCapacity: true)
        rows.0.append(contentsOf: 0...y.count)
        rows.1.removeAll(keepingCapacity: true)
        rows.1.append(contentsOf: repeatElement(0, count: y.count + 1))
        for i in 1...x.count {
            rows.1[0] = i
            for j in 1...y.count {
                rows.1[j] = min(rows.0[j] + 1, rows.1[j - 1] + 1, rows.0[j - 1] + (x[i - 1] == y[j - 1] ? 0 : 1))
            }
            swap(&rows.0, &rows.1)
        }
        return 0.3 + 0.6 * Double(rows.0[y.count]) / Double(max(x.count, y.count))
    }
}
