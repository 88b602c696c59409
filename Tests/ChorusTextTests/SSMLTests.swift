import Testing

@testable import ChorusText

/// The markup refused; documents parsed into messages and rendered are tested in ChorusConversationTests.
@Suite("SSML: break, sub, say-as, prosody, phoneme")
struct SSMLTests {
    @Test(
        "malformed or hostile markup: an error naming the field and the character",
        arguments: [
            (#"<speak>Hi <sub alias="x">there</speak>"#, "</speak> closes <sub>"),
            (#"<speak>Hi"#, "<speak> is not closed"),
            (#"<speak>Hi <break time="soon"/></speak>"#, "break time \"soon\""),
            (#"<speak>Hi <break time="61s"/></speak>"#, "break time \"61s\""),
            (#"<speak><prosody rate="9">Hi</prosody></speak>"#, "prosody rate \"9\""),
            (#"<speak><audio src="http://x/a.mp3">Hi</audio></speak>"#, "<audio> is not supported"),
            (#"<speak><say-as interpret-as="cardinal">many</say-as></speak>"#, "say-as interpret-as=\"cardinal\""),
            (#"<speak><sub>Hi</sub></speak>"#, "<sub> needs alias"),
            (#"<speak>Fish & chips</speak>"#, "\"&\" that is not an entity"),
            (#"<speak><sub alias="a"><emphasis>x</emphasis></sub></speak>"#, "no elements inside <sub>"),
            (#"<speak>Hi</speak> there"#, "text after </speak>"),
            (#"<speak><p x=1>Hi</p></speak>"#, "attribute x's value is not quoted"),
            ("<speak>" + String(repeating: "<p>", count: 20) + "x" + String(repeating: "</p>", count: 20) + "</speak>", "nested deeper than 16"),
            (#"<speak><phoneme alphabet="ipa" ph=""# + String(repeating: "a", count: 2_000) + #"">x</phoneme></speak>"#, "over 1000 characters"),
        ])
    func refuses(text: String, expected: String) {
        let error = #expect(throws: TextError.self) { try SSML.parts(of: text, field: "messages[1].text") }
        #expect(
            error?.subject == "messages[1].text" && error?.description.contains("SSML at character") == true
                && error?.description.contains(expected) == true, "\(String(describing: error))")
    }
}
