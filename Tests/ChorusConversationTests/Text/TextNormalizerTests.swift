import ChorusAudio
import ChorusFixtures
import ChorusTestSupport
import Foundation
import Testing

@testable import ChorusConversation
@testable import ChorusSpeech
@testable import ChorusText

/// The rules per conversation, per provider and in renders; the text alone is tested in ChorusTextTests.
@Suite("Text read as people read it: references, times, money, numbers, dates, phones, abbreviations")
struct TextNormalizerTests {
    @Test("the language chooses the rules: English's for en and en-GB, none for a language without rules; bad values refused naming the field")
    func language() throws {
        func spoken(_ text: String, _ language: String) -> String {
            TextNormalizer.spokenForm(of: text, lexicon: nil, normalize: true, reading: TextReading(language: language)).spoken
        }
        #expect(spoken("Um 4:30 kostet es $12.50 😀", "de") == "Um 4:30 kostet es $12.50 ")
        #expect(spoken("at 4:30", "en-GB") == "at four thirty")
        #expect(TextNormalizer.languages == ["en"])
        let directory = try TemporaryDirectory()
        let chat = try conversation(#"{"language": "de", "emoji": "name", "messages": [{"speaker": "A", "text": "Hallo."}]}"#, in: directory)
        #expect(chat.textReading == TextReading(language: "de", emoji: .name))
        for (json, field) in [(#""language": "german!""#, "language"), (#""language": "e""#, "language"), (#""emoji": "say""#, "emoji")] {
            let error = #expect(throws: ConversationError.self) {
                try conversation(#"{\#(json), "messages": [{"speaker": "A", "text": "Hi."}]}"#, in: directory)
            }
            #expect(error?.description.contains(field) == true, "\(String(describing: error))")
        }
    }

    @Test("on for the offline voices, off for services unless asked; a lexicon entry wins over the rules")
    func perProvider() async throws {
        let server = try StubServer { request in StubAudio.elevenLabs(request) }
        let directory = try TemporaryDirectory()
        let text = "Meet at 4:30 for $12.50, John 3:16."
        let plain = try conversation(#"{"voices": {"A": "elevenlabs:v"}, "messages": [{"speaker": "A", "text": "\#(text)"}]}"#, in: directory)
        #expect(plain.normalizesText(for: "elevenlabs") == false && plain.normalizesText(for: "piper") && plain.normalizesText(for: "espeak"))
        _ = try await render(plain, with: makeChorus(server: server, cache: directory.file("cache")))
        #expect(server.requests.last?.json?["text"] as? String == text)
        let asked = try conversation(
            #"""
            {"voices": {"A": "elevenlabs:v"}, "normalize_text": {"elevenlabs": true}, "lexicon": {"John": "Jon"},
             "messages": [{"speaker": "A", "text": "\#(text)"}]}
            """#, in: directory)
        let rendered = try await render(asked, with: makeChorus(server: server, cache: directory.file("cache")))
        #expect(
            server.requests.last?.json?["text"] as? String
                == "Meet at four thirty for twelve dollars and fifty cents, Jon chapter three, verse sixteen.")
        #expect(rendered.result.timeline.segments[0].words?.map(\.word) == ["Meet", "at", "4:30", "for", "12.50", "John", "3:16"])
        let off = try conversation(#"{"normalize_text": false, "messages": [{"speaker": "A", "text": "Hi."}]}"#, in: directory)
        #expect(off.normalizesText(for: "piper") == false)
        #expect(throws: ConversationError.self) {
            try conversation(#"{"normalize_text": "yes", "messages": [{"speaker": "A", "text": "Hi."}]}"#, in: directory)
        }
    }

    @Test("a Piper voice reads a scripture reference and money as people do: the Whisper model hears them")
    func heardByRecognizer() async throws {
        let directory = try TemporaryDirectory()
        let chat = try conversation(
            #"""
            {"messages": [{"speaker": "A", "text": "Read John 3:16 tonight, it costs $12.50.", "voice": "piper:en_US-joe-medium"}]}
            """#, in: directory)
        var configuration = Chorus.Configuration(registry: VoiceRegistry(providers: [PiperProvider()]), cacheDirectory: directory.file("cache"))
        configuration.transcriber = .off
        let rendered = try await render(chat, with: Chorus(configuration: configuration))
        #expect(rendered.result.timeline.segments[0].words?.map(\.word) == ["Read", "John", "3:16", "tonight", "it", "costs", "12.50"])
        let audio = try AudioFileReader(
            data: try #require(rendered.result.audio), name: "out.wav",
            outputFormat: AudioFormat(sampleRate: 16_000, channels: 1)
        ).readAll()
        let heard = try await whisperRecognizer().transcribe(audio.samples).text.lowercased()
        #expect(heard.contains("chapter") && heard.contains("verse"), "\(heard)")
        #expect(heard.contains("12.50") || heard.contains("twelve dollars"), "\(heard)")
    }
}
