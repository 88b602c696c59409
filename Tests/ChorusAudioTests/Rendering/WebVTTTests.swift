import Testing

@testable import ChorusAudio
@testable import ChorusWire

@Suite("WebVTT captions")
struct WebVTTTests {
    func timeline(_ texts: [String?], speakers: [String]? = nil) -> Timeline {
        let format = AudioFormat.speech
        let segments = texts.enumerated().map { index, text in
            Timeline.Segment(
                index: index, speaker: speakers?[index] ?? "S\(index)", start: format.roundedSeconds(frames: index * 44_100),
                end: format.roundedSeconds(frames: index * 44_100 + 22_050), startSample: index * 44_100,
                endSample: index * 44_100 + 22_050, text: text, source: "x", gainDB: 0, voice: nil, fallback: nil, words: nil)
        }
        return Timeline(format: format, samples: texts.count * 44_100, gapMs: 300, segments: segments)
    }

    @Test("cue text escapes &, < and >, so a '-->' in a message cannot end a cue timing line or open a tag")
    func escaping() {
        let vtt = WebVTT.captions(for: timeline(["Tom & Jerry <b>bold</b> a --> b"], speakers: ["A<B>&C"]))
        #expect(vtt.contains("<v A&lt;B&gt;&amp;C>Tom &amp; Jerry &lt;b&gt;bold&lt;/b&gt; a --&gt; b\n"))
        #expect(!vtt.contains("a --> b"))
    }

    @Test("blank lines inside a message are removed (they would end the cue); line breaks are kept")
    func newlines() {
        let vtt = WebVTT.captions(for: timeline(["First line\n\n\n  Second line  \r\nThird"]))
        #expect(vtt.contains("<v S0>First line\nSecond line\nThird\n"))
        #expect(!vtt.contains("\n\n\n"))
    }

    @Test("timestamps are hh:mm:ss.mmm; a message without text shows its speaker; cues are numbered")
    func layout() {
        #expect(WebVTT.timestamp(3_723.4567) == "01:02:03.457")
        #expect(WebVTT.timestamp(0) == "00:00:00.000")
        let vtt = WebVTT.captions(for: timeline([nil, "Hi"], speakers: ["Marcus", "Ann"]))
        #expect(vtt == "WEBVTT\n\n1\n00:00:00.000 --> 00:00:00.500\n<v Marcus>Marcus\n\n2\n00:00:01.000 --> 00:00:01.500\n<v Ann>Hi\n")
    }
}
