import ChorusAudio
import ChorusFixtures
import ChorusTestSupport
import Foundation
import Testing

@testable import ChorusConversation
@testable import ChorusWire

/// Transcription judged on real people (`HumanSpeech`: telephone prompts, audiobooks, commands, a speech), against
/// faster-whisper on the same weights in the same run: no more words wrong than it gets, the language heard, the
/// words timed where it times them.
///
/// Renders of human voice notes; the recognizer alone is tested in ChorusListeningTests.
@Suite("Whisper on human speech, against faster-whisper")
struct HumanSpeechTests {
    @Test(
        "a render of human voice notes hears them together: each message gets its own recording's words (none of its neighbours'), inside its segment"
    )
    func englishRender() async throws {
        let clips = try HumanSpeech.clips(language: "en")
        let directory = try TemporaryDirectory(prefix: "chorus-human-render")
        let messages = clips.enumerated().map { #"{"speaker": "S\#($0.offset % 3)", "audio": "\#($0.element.path)"}"# }
        let file = directory.file("chat.json")
        try Data(#"{"messages": [\#(messages.joined(separator: ","))]}"#.utf8).write(to: file)
        var configuration = Chorus.Configuration(cacheDirectory: directory.file("cache"))
        configuration.transcriber = .automatic
        let result = try await Chorus(configuration: configuration).render(
            try Conversation.load(from: file),
            to: RenderOutputs(audio: directory.file("out.wav"))
        ).result()
        #expect(result.warnings.isEmpty, "\(result.warnings)")
        let segments = result.timeline.segments
        #expect(segments.count == clips.count)
        var wrong = 0
        var words = 0
        for (segment, clip) in zip(segments, clips) {
            let errors = HumanSpeech.errors(segment.text ?? "", clip.text)
            wrong += errors.wrong
            words += errors.words
            #expect(segment.transcribed == true && errors.wrong <= max(2, errors.words / 4), "\(clip.id): \(segment.text ?? "") / \(clip.text)")
            #expect((segment.words ?? []).allSatisfy { $0.start >= segment.start && $0.start <= $0.end && $0.end <= segment.end }, "\(clip.id)")
        }
        #expect(Double(wrong) <= 0.1 * Double(words), "\(wrong) of \(words) words wrong")
    }

    @Test(
        "a render of a conversation in Spanish gives its recorded Spanish voice note the words whisper-base hears (the default model is English-only)"
    )
    func spanishRender() async throws {
        let clip = try #require(try HumanSpeech.clips(language: "es").first)
        let directory = try TemporaryDirectory(prefix: "chorus-spanish-render")
        let file = directory.file("chat.json")
        try Data(#"{"language": "es-MX", "messages": [{"speaker": "Abuela", "audio": "\#(clip.path)"}]}"#.utf8).write(to: file)
        let conversation = try Conversation.load(from: file)
        var configuration = Chorus.Configuration(cacheDirectory: directory.file("cache"))
        configuration.transcriber = .automatic
        var warnings: [String] = []
        var result: RenderResult?
        for try await event in try Chorus(configuration: configuration).render(
            conversation, options: RenderOptions(),
            to: RenderOutputs(audio: directory.file("out.wav")))
        {
            if case .warning(let warning) = event { warnings.append(warning) }
            if case .finished(let finished) = event { result = finished }
        }
        let segment = try #require(result?.timeline.segments.first)
        #expect(warnings.isEmpty, "\(warnings)")
        #expect(segment.transcribed == true && HumanSpeech.errors(segment.text ?? "", clip.text).wrong <= 2, "\(segment.text ?? "")")
        #expect((segment.words?.count ?? 0) >= 6)
    }
}
