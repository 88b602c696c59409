import ChorusFixtures
import ChorusTestSupport
import Foundation
import Testing

@testable import ChorusConversation
@testable import ChorusText

/// Documents parsed (and shown as a message shows them) and rendered; the markup refused is tested in ChorusTextTests.
@Suite("SSML: break, sub, say-as, prosody, phoneme")
struct SSMLTests {
    @Test("a document becomes text parts with readings, pauses and rates; it shows the written text")
    func parses() throws {
        let text =
            #"<speak>The <sub alias="World Wide Web Consortium">W3C</sub> met.<break time="1.5s"/><prosody rate="slow">Spell <say-as interpret-as="characters">AB</say-as>.</prosody><break strength="weak"/>Bye &amp; <!-- c -->thanks.</speak>"#
        let parts = try SSML.parts(of: text, field: "text")
        #expect(
            parts == [
                .text(
                    [
                        .init(written: "The ", spoken: nil), .init(written: "W3C", spoken: "World Wide Web Consortium"),
                        .init(written: " met.", spoken: nil),
                    ], rate: nil),
                .pause(seconds: 1.5),
                .text([.init(written: "Spell ", spoken: nil), .init(written: "AB", spoken: "A B"), .init(written: ".", spoken: nil)], rate: 0.8),
                .pause(seconds: 0.25),
                .text([.init(written: "Bye & ", spoken: nil), .init(written: "thanks.", spoken: nil)], rate: nil),
            ])
        #expect(SSML.visible(text) == "The W3C met. Spell AB. Bye & thanks.")
        #expect(Conversation.Message(speaker: "A", text: text).visibleText == "The W3C met. Spell AB. Bye & thanks.")
        // say-as readings.
        func said(_ kind: String, _ written: String) throws -> String? {
            guard
                case .text(let runs, _)? = try SSML.parts(of: #"<speak><say-as interpret-as="\#(kind)">\#(written)</say-as></speak>"#, field: "t")
                    .first
            else { return nil }
            return runs.first?.spoken
        }
        #expect(try said("cardinal", "1,234") == "one thousand two hundred thirty-four")
        #expect(try said("ordinal", "22") == "twenty-second")
        #expect(try said("date", "3/14") == "March fourteenth")
        #expect(try said("time", "7:15pm") == "seven fifteen p m")
        #expect(try said("telephone", "555-123-4567") == "five five five, one two three, four five six seven")
    }

    @Test(
        "through a provider: each part its own request, the reading sent for the written word, the rate as the provider's speed; the timeline shows the written words"
    )
    func throughProvider() async throws {
        let server = try StubServer { request in StubAudio.elevenLabs(request) }
        let directory = try TemporaryDirectory()
        let ssml =
            #"<speak>Meet the <sub alias='World Wide Web Consortium'>W3C</sub>.<break time='500ms'/><prosody rate='fast'>Quickly now.</prosody></speak>"#
        let chat = try conversation(#"{"voices": {"A": "elevenlabs:v"}, "messages": [{"speaker": "A", "text": "\#(ssml)"}]}"#, in: directory)
        let rendered = try await render(chat, with: makeChorus(server: server, cache: directory.file("cache")))
        let bodies = server.requests.compactMap(\.json)
        #expect(Set(bodies.compactMap { $0["text"] as? String }) == ["Meet the World Wide Web Consortium.", "Quickly now."])
        let fast = try #require(bodies.first { $0["text"] as? String == "Quickly now." })
        #expect((fast["voice_settings"] as? [String: Any])?["speed"] as? Double == 1.2, "fast (1.25) within ElevenLabs' 0.7–1.2")
        let segment = rendered.result.timeline.segments[0]
        #expect(segment.text == "Meet the W3C. Quickly now.")
        #expect(segment.words?.map(\.word) == ["Meet", "the", "W3C", "Quickly", "now"])
    }

    @Test("an offline voice: x-slow takes longer than x-fast for the same words (espeak-ng's rate)")
    func offlineRate() async throws {
        let directory = try TemporaryDirectory()
        var seconds: [Double] = []
        for rate in ["x-slow", "x-fast"] {
            let text = #"<speak><prosody rate='\#(rate)'>The quick brown fox jumps over the lazy dog.</prosody></speak>"#
            let chat = try conversation(#"{"messages": [{"speaker": "A", "text": "\#(text)", "voice": "espeak:en-us"}]}"#, in: directory)
            let rendered = try await render(chat, with: makeChorus(server: nil, cache: directory.file("cache")))
            let segment = rendered.result.timeline.segments[0]
            seconds.append(segment.end - segment.start)
            #expect(segment.words?.count == 9)
        }
        // 0.6 against 1.5 of the voice's pace: 2.5 times as long, give or take espeak-ng's own pauses.
        #expect(seconds[0] > 1.8 * seconds[1], "\(seconds)")
    }
}
