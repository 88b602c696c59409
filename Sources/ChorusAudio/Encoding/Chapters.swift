/// Chapter marks written into the audio file itself, one per message, so podcast players and
/// AVFoundation list and skip messages natively.
///
/// Chapters are contiguous: chapter *i* starts where message *i* starts and ends where message
/// *i + 1* starts (its trailing gap included); the last ends with the file. That is the one shape
/// all three chapter formats can carry (MP4 chapter lists and Vorbis `CHAPTERxxx` comments hold
/// start times only), so every format reads back the same marks.
///
/// ```swift
/// ChapterTitle.make(speaker: "Maya", text: "Can someone pick me up after practice today at five?")
/// // "Maya: Can someone pick me up after practice today…"
/// ```
public enum ChapterTitle {
    /// Words of the message kept in a title, at most.
    public static let maximumWords = 8
    /// Characters of the message kept in a title, at most (cut at a word boundary).
    public static let maximumCharacters = 48

    /// `Speaker: first words…`, or the speaker alone for a message without text.
    public static func make(speaker: String, text: String?) -> String {
        let words = (text ?? "").split(whereSeparator: { $0.isWhitespace || $0.isNewline })
        guard !words.isEmpty else { return speaker }
        var kept: [Substring] = []
        var length = 0
        for word in words.prefix(maximumWords) {
            let added = (kept.isEmpty ? 0 : 1) + word.count
            if length + added > maximumCharacters { break }
            kept.append(word)
            length += added
        }
        if kept.isEmpty { kept = [words[0].prefix(maximumCharacters)] }  // one very long word
        let shown = kept.joined(separator: " ")
        let cut = shown != words.joined(separator: " ")
        return "\(speaker): \(shown)\(cut ? "…" : "")"
    }
}

/// Chapters as encoders receive them: titles when the encoder starts (a header may need their
/// size), frames when it finishes.
package struct ChapterMark: Sendable, Equatable {
    package var title: String
    /// First and one-past-last frame.
    package var frames: Range<Int>

    package init(title: String, frames: Range<Int>) {
        self.title = title
        self.frames = frames
    }

    /// Contiguous marks: each title from its message's first frame to the next message's (the
    /// last to `total`). `starts` and `titles` pair up in order; extra entries of either are dropped.
    package static func contiguous(titles: [String], starts: [Int], total: Int) -> [ChapterMark] {
        let count = min(titles.count, starts.count)
        return (0..<count).map { index in
            let end = index + 1 < count ? starts[index + 1] : total
            return ChapterMark(title: titles[index], frames: starts[index]..<max(starts[index], end))
        }
    }

    /// Milliseconds from the start, rounded to the nearest.
    static func milliseconds(frames: Int, sampleRate: Int) -> Int {
        (frames * 1000 + sampleRate / 2) / sampleRate
    }
}
