import ChorusAudio
import Foundation
import Testing

@testable import ChorusConversation
@testable import ChorusSpeech
@testable import ChorusText

@Suite("Word timings match the text")
struct WordTimingTests {
    static let sentences = [
        "The soccer uniforms are in the dryer. We are out of milk and bread again, so much to do on the way.",
        "I don't know if I'll make it, but I can't miss the game at 4:30.",
        "Mom paid $12.50 for the tickets, and the the tickets were worth it.",
        "A word, a word, and another word — then the end!",
    ]

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

    @Test("espeak-ng: every word of the text, in order, once, inside the clip", arguments: WordTimingTests.sentences)
    func espeak(sentence: String) async throws {
        let speech = try await EspeakProvider().synthesize(SynthesisRequest(voice: "en-us", text: sentence, outputFormat: "pcm"))
        guard case .pcm(let buffer) = speech.audio else {
            Issue.record("no pcm")
            return
        }
        let words = try #require(speech.words)
        #expect(words.map(\.word) == WordAligner.words(in: sentence).map(\.word))
        var previous = 0.0
        for word in words {
            #expect(word.start >= previous - 1e-9 && word.end >= word.start && word.end <= buffer.duration + 1e-9, "\(word)")
            previous = word.start
        }
        #expect(words.filter { $0.end - $0.start > 0.02 }.count >= words.count * 3 / 4, "most words take time")
    }
}
