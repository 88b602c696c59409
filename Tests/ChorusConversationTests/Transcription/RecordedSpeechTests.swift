import ChorusAudio
import ChorusFixtures
import ChorusSpeechTestSupport
import ChorusTestSupport
import Foundation
import Testing

@testable import ChorusConversation
@testable import ChorusListening
@testable import ChorusSpeech
@testable import ChorusText
@testable import ChorusWire

/// Recorded messages in renders get words: one without text is transcribed by the offline model set-up installs, one
/// with text has it aligned to the recording; both in output time, in the timeline and the captions.
@Suite("Renders: words for recorded messages")
struct RecordedSpeechTests {
    /// A voice note: Flite's awb saying `FliteSpeech.sentence`, after 0.7 s of silence (which trimming cuts, so the
    /// words must be moved by what was cut) and before 0.5 s more, as a 16-bit WAV file. Also Flite's own word starts,
    /// from the start of the speech.
    static func voiceNote(in directory: TemporaryDirectory, name: String = "note.wav") async throws -> (URL, [WordTiming]) {
        let (samples, spoken) = try await FliteSpeech.speech()
        let format = AudioFormat(sampleRate: 16_000, channels: 1)
        let note = SignalGenerator.concatenate([
            SignalGenerator.silence(seconds: 0.7, format: format), AudioBuffer(format: format, samples: samples),
            SignalGenerator.silence(seconds: 0.5, format: format),
        ])
        let url = directory.file(name)
        try ClipEncoding.wav16.write(note, to: url)
        return (url, spoken)
    }

    @Test("a voice note without text is transcribed, one with text has every written word timed; both in output time, in the captions")
    func transcribedAndAligned() async throws {
        let directory = try TemporaryDirectory()
        let (note, spoken) = try await Self.voiceNote(in: directory)
        let sentence = FliteSpeech.sentence
        let conversation = Conversation(messages: [
            .init(speaker: "Sarah", audio: .file(note, label: "note.wav")),
            .init(speaker: "Marcus", text: "On my way.", voice: VoiceID(provider: "flite", voice: "rms")),
            .init(speaker: "Sarah", audio: .file(note, label: "note.wav"), text: sentence),
        ])
        let chorus = try Chorus(configuration: Chorus.Configuration(cacheDirectory: directory.file("cache")))
        let outputs = RenderOutputs(audio: directory.file("out.wav"), timeline: directory.file("out.json"), captions: directory.file("out.vtt"))
        let result = try await chorus.render(conversation, to: outputs).result()
        #expect(result.warnings.isEmpty, "\(result.warnings)")
        let segments = result.timeline.segments

        // Heard: the recognizer's text and words, marked as such.
        let heard = segments[0]
        #expect(heard.transcribed == true && heard.voice == nil && heard.source == "note.wav")
        let text = try #require(heard.text)
        #expect(WordErrors.rate(text, sentence) <= 0.15, "\(text)")
        let words = try #require(heard.words)
        #expect(words.count >= 14, "\(words)")
        #expect(words.allSatisfy { $0.start >= heard.start && $0.end <= heard.end && $0.start <= $0.end }, "\(words)")
        #expect(zip(words, words.dropFirst()).allSatisfy { $0.start <= $1.start })
        // The first word starts where the speech does: trimming cut the 0.7 s of silence before it (within the
        // trimmer's 25 ms margin and the onset refinement's tolerance), so its time was moved by what was cut.
        #expect(words[0].start - heard.start < 0.15, "first word at \(words[0].start - heard.start) s into the segment")
        // Flite's own onsets, matched by text, are near where the recognizer put them (from the start of the speech;
        // in continuous speech, without pauses to sharpen them against, Whisper's times are ~0.1 s off).
        var offsets: [Double] = []
        var remaining = spoken[...]
        let speechStart = words[0].start - spoken[0].start
        for word in words {
            guard let index = remaining.firstIndex(where: { WordErrors.normalized($0.word) == WordErrors.normalized(word.word) }) else {
                continue
            }
            offsets.append(abs(remaining[index].start - (word.start - speechStart)))
            remaining = remaining[(index + 1)...]
        }
        #expect(offsets.count >= 12 && offsets.sorted()[offsets.count / 2] < 0.2, "\(offsets)")

        // Synthesized: untouched, Flite's words, not transcribed.
        #expect(segments[1].transcribed == nil && segments[1].text == "On my way." && segments[1].words?.count == 3)

        // Aligned: the text as written, every word of it once and in order, inside the segment, not marked transcribed.
        let aligned = segments[2]
        #expect(aligned.transcribed == nil && aligned.text == sentence)
        let alignedWords = try #require(aligned.words)
        #expect(alignedWords.map(\.word) == WordAligner.words(in: sentence).map(\.word))
        #expect(alignedWords.allSatisfy { $0.start >= aligned.start && $0.end <= aligned.end })
        #expect(zip(alignedWords, alignedWords.dropFirst()).allSatisfy { $0.start <= $1.start })
        // The same recording: each aligned word starts where the heard word of the same spelling does (same offset).
        let shift = aligned.start - heard.start
        let matches = zip(alignedWords.prefix(9), words.prefix(9)).filter { WordErrors.normalized($0.word) == WordErrors.normalized($1.word) }
        #expect(matches.count >= 8 && matches.allSatisfy { abs($0.start - shift - $1.start) < 0.05 }, "\(matches)")

        // The files say the same: the timeline JSON and the captions carry the heard text.
        let json = try JSONSerialization.jsonObject(with: Data(contentsOf: directory.file("out.json"))) as? [String: Any]
        let first = try #require((json?["segments"] as? [[String: Any]])?.first)
        #expect(first["transcribed"] as? Bool == true && first["text"] as? String == text)
        let captions = try String(contentsOf: directory.file("out.vtt"), encoding: .utf8)
        #expect(
            captions.contains(WordErrors.normalized(text).prefix(3).joined(separator: " ")) || captions.lowercased().contains("quick brown fox"),
            "\(captions)")

        // A second render hears the same words from the transcript cache.
        let again = try await chorus.render(conversation, to: RenderOutputs(format: .wav)).result()
        #expect(again.timeline.segments.map(\.words) == segments.map(\.words))
        let cached = FileManager.default.enumerator(atPath: directory.file("cache/transcripts").path)?.allObjects.compactMap { $0 as? String }
        #expect((cached ?? []).filter { $0.hasSuffix(".json") }.count == 1, "one transcript: the same processed audio, twice")
    }

    @Test("\"transcribe\": false, or no recognizer: recorded messages keep no words, the text they came with stays, no warning")
    func off() async throws {
        let directory = try TemporaryDirectory()
        let (note, _) = try await Self.voiceNote(in: directory)
        let url = try directory.write(
            #"{"transcribe": false, "messages": [{"speaker": "S", "audio": "note.wav"}, {"speaker": "S", "audio": "note.wav", "text": "Hello."}]}"#,
            to: "c.json")
        let loaded = try Conversation.load(from: url)
        #expect(!loaded.transcribe && note.lastPathComponent == "note.wav")
        var configuration = Chorus.Configuration(cacheDirectory: directory.file("cache"))
        let asked = CallCount()
        configuration.transcriber = Transcriber { _ in
            asked.increment()
            return nil
        }
        let declined = try await Chorus(configuration: configuration).render(loaded, to: RenderOutputs(format: .wav)).result()
        #expect(asked.value == 0, "the conversation said no: the recognizer is never asked")
        configuration.transcriber = .off
        var spoken = loaded
        spoken.transcribe = true
        let off = try await Chorus(configuration: configuration).render(spoken, to: RenderOutputs(format: .wav)).result()
        for result in [declined, off] {
            #expect(result.warnings.isEmpty)
            #expect(result.timeline.segments.allSatisfy { $0.words == nil && $0.transcribed == nil })
            #expect(result.timeline.segments.map(\.text) == [nil, "Hello."])
        }
    }

    @Test("a recognizer that cannot be had (no model, a broken one): the render goes on without words and says why once")
    func unavailable() async throws {
        let directory = try TemporaryDirectory()
        let (note, _) = try await Self.voiceNote(in: directory)
        var configuration = Chorus.Configuration(cacheDirectory: directory.file("cache"))
        configuration.transcriber = Transcriber { _ in throw VoiceError.model("no model \"whisper-x\" in the models folder") }
        let conversation = Conversation(messages: [
            .init(speaker: "A", audio: .file(note, label: "a.wav")),
            .init(speaker: "B", audio: .file(note, label: "b.wav")),
        ])
        let result = try await Chorus(configuration: configuration).render(conversation, to: RenderOutputs(format: .wav)).result()
        #expect(result.timeline.segments.count == 2 && result.timeline.segments.allSatisfy { $0.words == nil && $0.text == nil })
        #expect(
            result.warnings.count == 1 && result.warnings[0].contains("messages[0] (A)") && result.warnings[0].contains("whisper-x"),
            "\(result.warnings)")
    }
}

/// A thread-safe count.
final class CallCount: @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0
    var value: Int { lock.withLock { count } }
    func increment() { lock.withLock { count += 1 } }
}
