import Testing

@testable import ChorusText

/// The text alone; pauses in conversation files and renders are tested in ChorusConversationTests.
@Suite("Pauses in text: [pause:800ms], [pause:1.5s]")
struct SpeechControlsTests {
    @Test("parsed into text and pauses; shown without them; other brackets left as typed")
    func parsing() throws {
        #expect(try SpeechControls.parts(of: "Wait. [pause:1.5s] Okay.", field: "t") == [.text("Wait."), .pause(seconds: 1.5), .text("Okay.")])
        #expect(
            try SpeechControls.parts(of: "a[PAUSE: 250 ms]b [pause:1s][pause:500ms] c", field: "t")
                == [.text("a"), .pause(seconds: 0.25), .text("b"), .pause(seconds: 1.5), .text("c")])
        #expect(try SpeechControls.parts(of: "[laughs] Fine. [pause] Really.", field: "t") == [.text("[laughs] Fine. [pause] Really.")])
        #expect(SpeechControls.visible("Wait. [pause:1.5s] Okay.") == "Wait. Okay.")
        #expect(SpeechControls.visible("a[pause:250ms]b [pause:1s] [pause:500ms] c") == "a b c")
        #expect(SpeechControls.visible("[sighs] Well [pause:1s] [laughs] okay") == "[sighs] Well [laughs] okay")
        #expect(SpeechControls.visible("No controls [here].") == "No controls [here].")
    }

    @Test(
        "malformed, out of range, or not between words: an error naming the field, the control and its position",
        arguments: [
            ("Hi [pause:abc] there", "[pause:abc] at character 4: a pause is [pause:800ms] or [pause:1.5s]"),
            ("Hi [pause:800ms there", "[pause:800ms there at character 4: unterminated"),
            ("Hi [pause:0ms] there", "at character 4: a pause must be longer than 0"),
            ("Hi [pause:61s] there", "a pause may be at most 60 s"),
            ("Hi [pause:-1s] there", "a pause is [pause:800ms]"),
            ("[pause:1s] Hi", "at character 1: a pause goes between words (the silence before a message is its gap_ms)"),
            ("Hi [pause:1s]", "a pause goes between words (the silence after a message is the next one's gap_ms)"),
        ])
    func errors(text: String, expected: String) {
        let error = #expect(throws: TextError.self) { try SpeechControls.parts(of: text, field: "messages[2].text") }
        #expect(error?.subject == "messages[2].text" && error?.description.contains(expected) == true, "\(String(describing: error))")
    }
}
