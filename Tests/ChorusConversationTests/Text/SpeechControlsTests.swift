import ChorusAudio
import ChorusFixtures
import ChorusTestSupport
import Foundation
import Testing

@testable import ChorusConversation

/// Pauses in conversation files and renders; the text alone is tested in ChorusTextTests.
@Suite("Pauses in text: [pause:800ms], [pause:1.5s]")
struct SpeechControlsTests {
    @Test("a conversation file: checked at load, naming the message; a recorded clip's text takes none")
    func conversationFile() throws {
        let directory = try TemporaryDirectory()
        try ClipEncoding.wav16.write(SignalGenerator.tone(frequency: 200, amplitude: 0.3, seconds: 0.5, format: .speech), to: directory.file("a.wav"))
        for (json, field, reason) in [
            (
                #"{"messages": [{"speaker": "A", "text": "Fine."}, {"speaker": "B", "text": "Hi [pause:2x] there"}]}"#, "messages[1].text",
                "a pause is"
            ),
            (
                #"{"messages": [{"speaker": "A", "audio": "a.wav", "text": "Hi [pause:1s] there"}]}"#, "messages[0].text",
                "this message is a recorded clip"
            ),
            (
                #"{"intro": {"speaker": "A", "text": "[pause:1s] Welcome"}, "messages": [{"speaker": "A", "text": "Hi."}]}"#, "intro.text",
                "between words"
            ),
        ] {
            let error = #expect(throws: ConversationError.self) {
                try Conversation.parse(Data(json.utf8), baseDirectory: directory.url, name: "c.json")
            }
            #expect(error?.description.contains(field) == true && error?.description.contains(reason) == true, "\(String(describing: error))")
        }
    }

    @Test(
        "a pause is exactly that much digital silence between the parts as spoken, each part its own request (with the other as context); words are the visible text's, shifted by the pause"
    )
    func exactSilence() async throws {
        let server = try StubServer { request in StubAudio.elevenLabs(request) }
        let directory = try TemporaryDirectory()
        let chat = try conversation(
            #"""
            {"voices": {"A": "elevenlabs:voice1"}, "messages": [{"speaker": "A", "text": "One two three. [pause:800ms] Four five."}]}
            """#, in: directory)
        var options = RenderOptions()
        options.sampleRate = 24_000  // the stub's rate: no resampling, so the silence can be counted to the sample
        options.normalize = false
        let rendered = try await render(chat, with: makeChorus(server: server, cache: directory.file("cache")), options: options)
        let texts = server.requests.compactMap { $0.json?["text"] as? String }
        #expect(Set(texts) == ["One two three.", "Four five."])
        #expect(server.requests.first { $0.json?["text"] as? String == "Four five." }?.json?["previous_text"] as? String == "One two three.")
        let segment = rendered.result.timeline.segments[0]
        #expect(segment.text == "One two three. Four five.")
        let words = try #require(segment.words)
        #expect(words.map(\.word) == ["One", "two", "three", "Four", "five"])
        // The stub's audio: 20 ms of digital silence, a tone starting at sin 0 = 0, 20 ms of silence. So the silence
        // between the parts is exactly 20 ms + 800 ms + 20 ms and the tone's first sample.
        let audio = try #require(rendered.result.audio)
        let samples = try AudioFileReader(data: audio, name: "out.wav").readAll().samples
        var longest = 0
        var run = 0
        for sample in samples {
            run = sample == 0 ? run + 1 : 0
            longest = max(longest, run)
        }
        #expect(longest == 480 + 19_200 + 480 + 1, "longest digital silence \(longest) samples")
        // "Four" starts the first part's length and the pause after "One" (first part: 14 characters → 0.3 s of tone).
        let first = Double(StubAudio.pcm16(for: "One two three.").count / 2) / 24_000
        #expect(abs((words[3].start - words[0].start) - (first + 0.8)) < 0.001, "\(words[3].start - words[0].start) s")
    }

    @Test("an offline voice (espeak-ng): the pause measured in the output; the same text without it has no such silence")
    func offlinePause() async throws {
        let directory = try TemporaryDirectory()
        var lengths: [Double] = []
        for text in ["We will start soon. [pause:1.5s] Please sit down.", "We will start soon. Please sit down."] {
            let chat = try conversation(#"{"messages": [{"speaker": "A", "text": "\#(text)", "voice": "espeak:en-us"}]}"#, in: directory)
            let rendered = try await render(chat, with: makeChorus(server: nil, cache: directory.file("cache")))
            let samples = try AudioFileReader(data: try #require(rendered.result.audio), name: "out.wav").readAll().samples
            var longest = 0
            var run = 0
            for sample in samples {
                run = sample == 0 ? run + 1 : 0
                longest = max(longest, run)
            }
            lengths.append(Double(longest) / 44_100)
            #expect(rendered.result.timeline.segments[0].words?.map(\.word) == ["We", "will", "start", "soon", "Please", "sit", "down"])
        }
        // 1.5 s of digital silence, plus the zeros espeak-ng itself ends and starts sentences with (it puts ~0.35 s of
        // them between the two sentences when they are spoken at once).
        #expect(lengths[0] >= 1.5 && lengths[0] < 2.0, "\(lengths)")
        #expect(lengths[1] < 0.5, "\(lengths)")
    }
}
