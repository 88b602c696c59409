import ChorusAudio
import ChorusFixtures
import ChorusTestSupport
import Foundation
import Testing

@testable import ChorusConversation
@testable import ChorusSpeech
@testable import ChorusText

@Suite("espeak-ng voices (offline)", .serialized)
struct EspeakTests {
    static let sentence = "The quick brown fox jumps over the lazy dog, and practice moved to half past four."

    @Test("the default voices (Flite's, then espeak-ng's) really differ: pitch or speaking rate, measured on the audio")
    func defaultVoicesDiffer() async throws {
        let providers: [String: any VoiceProvider] = ["flite": FliteProvider(), "espeak": EspeakProvider()]
        var measured: [(voice: String, pitch: Double, duration: Double)] = []
        for voice in DefaultVoices.flite.voices(in: VoiceRegistry(providers: [FliteProvider(), EspeakProvider()])) {
            let provider = try #require(providers[voice.provider])
            let speech = try await provider.synthesize(SynthesisRequest(voice: voice.voice, text: Self.sentence, outputFormat: "pcm"))
            guard case .pcm(let buffer) = speech.audio else {
                Issue.record("\(voice) returned encoded audio")
                return
            }
            let range = SilenceTrimmer().soundRange(of: buffer)
            let spoken = buffer.frames(range)
            measured.append((voice.description, medianPitch(spoken), spoken.duration))
            guard voice.provider == "espeak" else { continue }
            // The variant suffix must have been applied, not silently dropped.
            let name = String(voice.voice.split(separator: "?")[0])
            let identifier = try await EspeakEngine.shared.currentVoiceIdentifier(for: name)
            #expect(identifier.hasSuffix("+" + name.split(separator: "+")[1]), "\(name) resolved to \(identifier)")
        }
        #expect(measured.count == 12)
        for (index, first) in measured.enumerated() {
            for second in measured[(index + 1)...] {
                let pitchDifference = abs(first.pitch - second.pitch) / max(first.pitch, second.pitch)
                let rateDifference = abs(first.duration - second.duration) / max(first.duration, second.duration)
                #expect(
                    pitchDifference >= 0.08 || rateDifference >= 0.08,
                    "\(first.voice) (\(Int(first.pitch)) Hz, \(first.duration) s) vs \(second.voice) (\(Int(second.pitch)) Hz, \(second.duration) s)")
            }
        }
    }

    @Test("a Flite voice gives the same audio for the same text while an espeak-ng variant speaks beside it (both draw noise from libc's rand())")
    func fliteBesideVariant() async throws {
        func samples(_ provider: any VoiceProvider, _ voice: String) async throws -> [Float] {
            let speech = try await provider.synthesize(SynthesisRequest(voice: voice, text: Self.sentence, outputFormat: "pcm"))
            guard case .pcm(let buffer) = speech.audio else { throw VoiceError(.invalidResponse, provider: voice, message: "not pcm") }
            return buffer.samples
        }
        let espeak = EspeakProvider()
        let flite = FliteProvider()
        let alone = try await samples(flite, "slt")
        for round in 0..<4 {
            async let variant = samples(espeak, "en-us+f3")
            async let slt = samples(flite, "slt")
            let (heard, spoken) = try await (variant, slt)
            #expect(!heard.isEmpty)
            // Counts, not the arrays: printing them takes minutes.
            #expect(spoken.count == alone.count && zip(spoken, alone).filter { $0 != $1 }.isEmpty, "round \(round)")
        }
    }

    @Test("language codes resolve (en-gb) and unknown voices are a clear error")
    func voiceNames() async throws {
        let provider = EspeakProvider()
        _ = try await provider.synthesize(SynthesisRequest(voice: "en-gb+f2", text: "Hello there.", outputFormat: "pcm"))
        do {
            _ = try await provider.synthesize(SynthesisRequest(voice: "xx-nowhere", text: "Hello.", outputFormat: "pcm"))
            Issue.record("expected voiceNotFound")
        } catch let error as VoiceError {
            #expect(error.kind == .voiceNotFound)
            #expect(error.description.contains("xx-nowhere"))
        }
        do {
            _ = try await provider.synthesize(SynthesisRequest(voice: "en-us?pitch=500", text: "Hello.", outputFormat: "pcm"))
            Issue.record("expected badRequest")
        } catch let error as VoiceError {
            #expect(error.kind == .badRequest && error.description.contains("pitch=500"))
        }
    }

    @Test("word timings follow the text, in order, inside the clip")
    func wordTimings() async throws {
        let text = "Running late, practice moved to 4:30."
        let speech = try await EspeakProvider().synthesize(SynthesisRequest(voice: "en-us", text: text, outputFormat: "pcm"))
        guard case .pcm(let buffer) = speech.audio, let words = speech.words else {
            Issue.record("no pcm or words")
            return
        }
        #expect(words.map(\.word).prefix(5) == ["Running", "late", "practice", "moved", "to"])
        var previous = 0.0
        for word in words {
            #expect(word.start >= previous && word.end >= word.start && word.end <= buffer.duration + 1e-9)
            previous = word.start
        }
    }

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

@Suite("Text chunking")
struct ChunkingTests {
    @Test("chunks stay within the limit and break at sentences")
    func sentences() {
        let text = "First sentence here. Second one is a bit longer! Third? Fourth sentence ends it."
        let chunks = TextChunker.chunks(text, limit: 40)
        #expect(chunks == ["First sentence here.", "Second one is a bit longer! Third?", "Fourth sentence ends it."])
        #expect(chunks.joined(separator: " ") == text)
        // A closing quote or bracket stays with the sentence it closes (the closers espeak-ng's clauses keep too).
        let quoted = "She said «Stop.» He stopped. {Done!} Next one here."
        #expect(TextChunker.chunks(quoted, limit: 20) == ["She said «Stop.»", "He stopped. {Done!}", "Next one here."])
    }

    @Test("a sentence over the limit splits between words; a huge word is cut")
    func words() {
        let chunks = TextChunker.chunks("alpha beta gamma delta epsilon zeta eta theta", limit: 12)
        #expect(chunks.allSatisfy { $0.count <= 12 })
        #expect(chunks.joined(separator: " ") == "alpha beta gamma delta epsilon zeta eta theta")
        #expect(TextChunker.chunks(String(repeating: "x", count: 25), limit: 10) == ["xxxxxxxxxx", "xxxxxxxxxx", "xxxxx"])
        #expect(TextChunker.chunks("short", limit: 100) == ["short"])
    }

    @Test("the opening clause: up to the first clause or sentence end, never inside a number, an abbreviation or markup")
    func firstClause() throws {
        func cut(_ text: String) -> [String]? {
            TextChunker.firstClause(text).map { [$0.first, $0.rest, $0.endsSentence ? "sentence" : "clause"] }
        }
        #expect(cut("Running late, practice moved to four thirty.") == ["Running late,", "practice moved to four thirty.", "clause"])
        #expect(cut("  Quick update:  the dentist called.\nBye. ") == ["Quick update:", "the dentist called.\nBye.", "clause"])
        #expect(cut("Good news! Grandma lands at noon.") == ["Good news!", "Grandma lands at noon.", "sentence"])
        #expect(cut("Wait… what?") == ["Wait…", "what?", "sentence"])
        // Numbers, times and verses keep their marks; a capitalized short word before a period may be a title.
        #expect(cut("It costs 1,000 dollars at 4:30, sadly.") == ["It costs 1,000 dollars at 4:30,", "sadly.", "clause"])
        #expect(cut("Dr. Smith called. Call back.") == ["Dr. Smith called.", "Call back.", "sentence"])
        #expect(cut("Mrs. Jones, hi there.") == ["Mrs. Jones,", "hi there.", "clause"])
        #expect(cut("Meet at 4 p.m. tomorrow, then home.") == ["Meet at 4 p.m. tomorrow,", "then home.", "clause"])
        #expect(cut("Cats vs. dogs, round two.") == ["Cats vs. dogs,", "round two.", "clause"])
        #expect(cut("\"Mr. Smith called. Call back.\"") == ["\"Mr. Smith called.", "Call back.\"", "sentence"])
        #expect(cut("(Dr. Lee) is here. Come in.") == ["(Dr. Lee) is here.", "Come in.", "sentence"])
        // Nothing to cut: one clause, nothing after the mark, an opening over a dozen words, markup, no words first.
        #expect(cut("Just one sentence here.") == nil)
        #expect(cut("Trailing marks only, ") == nil)
        #expect(cut("Hello, !!!") == nil)
        #expect(cut("One two three four five six seven eight nine ten eleven twelve thirteen, then more.") == nil)
        #expect(cut("Well, <break time=\"1s\"/> maybe.") == nil)
        #expect(cut("And the winner is… [pause:1.5s] Grandma!") == nil)
        #expect(cut("Say [[ʃɪˈvɔːn]], please.") == nil)
        #expect(cut("... , then words.") == nil)
        #expect(cut("") == nil)
        let twelve = "One two three four five six seven eight nine ten eleven twelve, then more."
        #expect(cut(twelve)?.first == "One two three four five six seven eight nine ten eleven twelve,")
    }
}
