import Testing

@testable import ChorusSpeech
@testable import ChorusText

/// The offline voices' word timings; the aligner alone is tested in ChorusTextTests.
@Suite("Word timings match the text")
struct WordTimingTests {
    static let sentences = [
        "The soccer uniforms are in the dryer. We are out of milk and bread again, so much to do on the way.",
        "I don't know if I'll make it, but I can't miss the game at 4:30.",
        "Mom paid $12.50 for the tickets, and the the tickets were worth it.",
        "A word, a word, and another word — then the end!",
    ]

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
