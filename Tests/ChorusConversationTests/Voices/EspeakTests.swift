import ChorusFixtures
import ChorusTestSupport
import Foundation
import Testing

@testable import ChorusConversation
@testable import ChorusSpeech

/// The default voices assigned and a conversation rendered; the voices alone are tested in ChorusSpeechTests.
@Suite("espeak-ng voices (offline)", .serialized)
struct EspeakTests {
    @Test("speakers get distinct default voices in order of appearance, alternating female and male; explicit voices win")
    func assignment() throws {
        let directory = try TemporaryDirectory()
        let chat = try conversation(
            #"""
            {"voices": {"Dad": "openai:onyx", "Mia": "flite:rms"},
             "messages": [
              {"speaker": "Ann", "text": "a"}, {"speaker": "Ben", "text": "b"}, {"speaker": "Ann", "text": "c"},
              {"speaker": "Dad", "text": "d"}, {"speaker": "Mia", "text": "e"}, {"speaker": "Ben", "text": "f", "voice": "openai:nova"},
              {"speaker": "Cal", "audio": "x.wav"}, {"speaker": "Dee", "text": "g"}]}
            """#, in: directory)
        let chorus = try makeChorus(server: nil, cache: directory.file("cache"))
        let voices = chorus.voices(for: chat).map { $0?.description }
        let defaults = DefaultVoices.flite.voices(in: VoiceRegistry(providers: [FliteProvider(), EspeakProvider()])).map(\.description)
        #expect(voices[0] == defaults[0])
        #expect(voices[1] == defaults[2], "defaults[1] is taken by Mia")
        #expect(voices[2] == voices[0])
        #expect(voices[3] == "openai:onyx")
        #expect(voices[4] == "flite:rms")
        #expect(voices[5] == "openai:nova")
        #expect(voices[6] == nil)
        #expect(voices[7] == defaults[5], "speakers without a hint alternate, female first: Dee is the third, and slt is Ann's")
        #expect(chorus.voices(for: chat).map { $0?.description } == voices, "assignment is deterministic")
    }

    @Test("the sample family chat renders offline: distinct voices, words inside segment bounds")
    func familyChat() async throws {
        let url = Repository.file("samples/family-chat.json")
        let chat = try Conversation.load(from: url)
        #expect((12...20).contains(chat.messages.count))
        let directory = try TemporaryDirectory()
        let chorus = try makeChorus(server: nil, cache: directory.file("cache"))
        let result = try await render(chat, with: chorus, to: directory.file("family.wav"))
        let timeline = result.timeline
        #expect(timeline.speakers.count == 4)
        var voiceBySpeaker: [String: String] = [:]
        for segment in timeline.segments {
            let voice = try #require(segment.voice)
            if let known = voiceBySpeaker[segment.speaker] { #expect(known == voice) } else { voiceBySpeaker[segment.speaker] = voice }
            let words = try #require(segment.words)
            #expect(!words.isEmpty)
            var previous = segment.start
            for word in words {
                #expect(
                    word.start >= previous - 1e-6 && word.start >= segment.start - 1e-6 && word.end <= segment.end + 1e-6,
                    "\(word) outside \(segment.start)…\(segment.end) or out of order")
                previous = word.start
            }
        }
        #expect(Set(voiceBySpeaker.values).count == 4, "each speaker has their own voice")
        #expect(result.progress.requests == chat.messages.count && result.progress.cacheHits == 0)
        for segment in timeline.segments.dropFirst() { #expect(segment.startSample - timeline.segments[segment.index - 1].endSample == 13_230) }
    }
}
