import Testing

@testable import ChorusText

/// The aligner alone; the offline voices' word timings are tested in ChorusSpeechTests.
@Suite("Word timings match the text")
struct WordTimingTests {
    @Test("the text's words: punctuation and symbols stripped at the edges, kept inside")
    func tokenization() {
        let words = WordAligner.words(in: "Mom paid $12.50, don't — it's 4:30. (Really?)").map(\.word)
        #expect(words == ["Mom", "paid", "12.50", "don't", "it's", "4:30", "Really"])
        #expect(WordAligner.words(in: "  ").isEmpty)
    }

    @Test("words without an anchor share the time before the next one by length; pauses end words")
    func alignment() {
        let words = WordAligner.align(
            "Out of milk. Bread too.", anchors: [(0, 0.0), (7, 0.4), (13, 1.2), (13, 1.5), (2, 1.6)],
            pauses: [0.9, 2.0], duration: 2.2)
        #expect(words.map(\.word) == ["Out", "of", "milk", "Bread", "too"])
        #expect(abs(words[0].end - 0.24) < 1e-9 && abs(words[1].start - 0.24) < 1e-9, "\(words)")
        #expect(words[2].start == 0.4 && words[2].end == 0.9, "milk ends at the pause")
        #expect(words[3].start == 1.2, "the repeated anchor does not move Bread")
        #expect(words[4].start > 1.2 && words[4].end == 2.0, "too shares the time up to the final pause")
        for (first, second) in zip(words, words.dropFirst()) { #expect(first.end <= second.start && first.start <= first.end) }
    }
}
