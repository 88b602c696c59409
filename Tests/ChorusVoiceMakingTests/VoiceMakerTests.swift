import ChorusAudio
import ChorusFixtures
import ChorusListening
import ChorusSpeech
import ChorusSpeechTestSupport
import ChorusSupport
import ChorusTestSupport
import Foundation
import Testing

@testable import ChorusVoiceMaking

/// Voices made from real human recordings (the human corpus's audiobook reader and 1961 speech), end to end on a
/// tiny search budget, in a models folder of their own (`PrivateModels`); and the
/// recordings and names that cannot make a voice, refused by name with nothing left in the voices folder.
@Suite("Voices made from recordings")
struct VoiceMakerTests {
    static func clip(_ id: String) throws -> URL {
        let clips = try HumanSpeech.clips()
        return try #require(clips.first { $0.id == id }, "\(id) is not in the human corpus").url
    }

    /// An audiobook reader's two sentences (11.2 s of speech).
    static func reader() throws -> [URL] {
        try ["pocketsphinx/librivox-0890", "pocketsphinx/librivox-0920"].map(clip)
    }

    @Test("a voice made from an audiobook reader's sentences is installed whole, usable at once, and the same again for the seed")
    func madeEndToEnd() async throws {
        let folder = try PrivateModels()
        let before = folder.voiceFiles
        let maker = VoiceMaker(kokoro: folder.kokoro, speaker: folder.speaker)
        let seen = Locked<[VoiceMaker.Progress]>([])
        let record = try await maker.make(name: "reader", from: try Self.reader(), options: .init(seed: 7, candidates: 4)) { progress in
            seen.withLock { $0.append(progress) }
        }
        let expected = (before + ["reader.made.json", "reader.npy"]).sorted()
        #expect(folder.voiceFiles == expected)
        #expect(record.madeBy == "chorus" && record.sources.count == 2 && record.candidates == 4)
        for source in record.sources {
            #expect(source.sha256.count == 64 && source.speechSeconds > 2 && source.speechSeconds <= source.seconds + 0.01, "\(source)")
        }
        #expect(record.sounds == "male" && (70...160).contains(record.personPitch), "\(record.personPitch) Hz")
        // One of the best voices heard (the final choice also weighs pitch and what Whisper understands).
        #expect(record.similarity >= record.nearestStockSimilarity - 0.1 && record.similarity > 0.5, "\(record.summary)")
        #expect(record.wordErrorRate.map { $0 <= 0.2 } == true, "\(String(describing: record.wordErrorRate))")
        let progress = seen.withLock { $0 }
        #expect(progress.last?.done == 4 && progress.allSatisfy { $0.total == 4 })
        #expect(MadeVoices.record(of: "reader", in: folder.voices) == record)

        // Usable at once as kokoro:reader, listed as made.
        let provider = KokoroProvider(folder: folder.kokoro)
        let speech = try await provider.synthesize(SynthesisRequest(voice: "reader", text: "Dinner is at seven tonight.", outputFormat: "pcm"))
        guard case .pcm(let audio) = speech.audio else {
            Issue.record("no PCM")
            return
        }
        #expect(audio.duration > 1 && audio.peak > 0.05)
        let listed = try await provider.voices().first { $0.name == "reader" }
        #expect(listed?.details.contains("made by Chorus from 2 recordings") == true, "\(String(describing: listed))")
        // A person's voice is theirs: never given to a speaker who was not given it.
        let defaults = provider.defaultVoices()
        #expect(!(defaults.first + defaults.later).contains { $0.contains("reader") }, "\(defaults)")

        // The same recordings and seed: the same voice.
        _ = try await maker.make(name: "again", from: try Self.reader(), options: .init(seed: 7, candidates: 4))
        #expect(
            try Data(contentsOf: folder.voices.appendingPathComponent("again.npy"))
                == Data(contentsOf: folder.voices.appendingPathComponent("reader.npy")))

        try MadeVoices.remove(name: "again", in: folder.voices)
        #expect(!folder.voiceFiles.contains { $0.hasPrefix("again") })
        #expect(throws: VoiceError.self) { try MadeVoices.remove(name: "jf_alpha", in: folder.voices) }
    }

    @Test("recordings that cannot make a voice are refused naming the file and why; nothing is left in the voices folder")
    func refused() async throws {
        let folder = try PrivateModels()
        let before = folder.voiceFiles
        let scratch = try TemporaryDirectory()
        let maker = VoiceMaker(kokoro: folder.kokoro, speaker: folder.speaker)
        let silence = scratch.file("silence.wav")
        try ClipEncoding.wav16.write(
            AudioBuffer(format: AudioFormat(sampleRate: 16_000, channels: 1), samples: [Float](repeating: 0, count: 16_000 * 20)), to: silence)
        let corrupt = try scratch.write(String(repeating: "not audio ", count: 500), to: "corrupt.m4a")
        let missing = scratch.file("missing.wav")
        let short = try Self.clip("pocketsphinx/librivox-0890")
        let reader = try Self.reader()
        let otherMan = try Self.clip("whisper-cpp/jfk")

        func refusal(name: String = "someone", _ files: [URL], candidates: Int = 4) async -> String {
            do {
                _ = try await maker.make(name: name, from: files, options: .init(candidates: candidates))
                return "made"
            } catch {
                return String(describing: error)
            }
        }
        let silent = await refusal([silence])
        #expect(silent.contains(silence.path) && silent.contains("no speech"), "\(silent)")
        let broken = await refusal([corrupt])
        #expect(broken.contains(corrupt.path), "\(broken)")
        let absent = await refusal([missing])
        #expect(absent.contains(missing.path), "\(absent)")
        let tooShort = await refusal([short])
        #expect(tooShort.contains(short.path) && tooShort.contains("at least 10 s"), "\(tooShort)")
        // Music (30 s of a music-on-hold track): loud, voiced, one "voice" to the speaker model, but no words.
        let music = try #require(try HumanSpeech.clips(language: "zxx").first, "no music in the human corpus").url
        let musical = await refusal([music])
        #expect(musical.contains(music.path) && musical.contains("not speech"), "\(musical)")
        // Aimed at several people: each needs 5 s of speech.
        let command = try Self.clip("pocketsphinx/cards-005")
        let group: String
        do {
            _ = try await maker.make(name: "group", people: [reader, [command]], options: .init(candidates: 4))
            group = "made"
        } catch {
            group = String(describing: error)
        }
        #expect(group.contains(command.path) && group.contains("at least 5 s of each person"), "\(group)")
        let twoPeople = await refusal(reader + [otherMan])
        #expect(twoPeople.contains("same person"), "\(twoPeople)")
        let taken = await refusal(name: "jf_alpha", reader)
        #expect(taken.contains("jf_alpha") && taken.contains("exists"), "\(taken)")
        for bad in ["", "../x", "a+b", "mom?speed=2", String(repeating: "a", count: 49), "1mom"] {
            let refused = await refusal(name: bad, reader)
            #expect(refused.contains("not a voice name"), "\(bad): \(refused)")
        }
        let tooMany = await refusal(Array(repeating: short, count: 17))
        #expect(tooMany.contains("1 to 16 recordings"), "\(tooMany)")
        let budget = await refusal(reader, candidates: 1)
        #expect(budget.contains("candidates"), "\(budget)")
        #expect(folder.voiceFiles == before)
    }

    @Test("recordings with less speech than a piece (single words) are heard together, not left out: embedding and pitch")
    func shortRecordings() async throws {
        let folder = try PrivateModels()
        let encoder = try SpeakerEncoder.shared(folder: folder.speaker)
        let scratch = try TemporaryDirectory()
        // The reader's two sentences cut into 1.2 s files, each less than a piece (1.6 s).
        var short: [URL] = []
        for url in try Self.reader() {
            let (samples, _) = try Enrolment.decode(url)
            let length = Enrolment.rate * 12 / 10
            for start in stride(from: 0, to: samples.count - length, by: length) {
                let file = scratch.file("piece-\(short.count).wav")
                try ClipEncoding.wav16.write(
                    AudioBuffer(format: AudioFormat(sampleRate: Enrolment.rate, channels: 1), samples: Array(samples[start..<(start + length)])),
                    to: file)
                short.append(file)
            }
        }
        let whole = try Enrolment.hear(try Self.reader(), encoder: encoder)
        let pieces = try Enrolment.hear(Array(short.prefix(Enrolment.mostRecordings)), encoder: encoder, least: Enrolment.leastSpeechSecondsEach)
        #expect(!pieces.pieces.isEmpty && SpeakerEncoder.similarity(pieces.embedding, whole.embedding) > 0.9, "\(pieces.pieces.count) pieces")
        #expect(abs(pieces.pitch / whole.pitch - 1) < 0.1, "\(pieces.pitch) Hz against \(whole.pitch) Hz")
    }

    @Test("Whisper hears words in speech of any language (Spanish, French telephone prompts), none in music")
    func spokenWords() async throws {
        func recording(_ url: URL) throws -> Enrolment.Recording {
            let (samples, digest) = try Enrolment.decode(url)
            let seconds = Double(samples.count) / Double(Enrolment.rate)
            return Enrolment.Recording(file: url, sha256: digest, seconds: seconds, speechSeconds: seconds, opening: samples)
        }
        let speech = try HumanSpeech.clips(language: "es") + HumanSpeech.clips(language: "fr")
        #expect(speech.count >= 2)
        try await SpokenWords.check(try speech.map { try recording($0.url) })
        let music = try #require(try HumanSpeech.clips(language: "zxx").first).url
        let refused = await #expect(throws: VoiceMakingError.self) {
            try await SpokenWords.check([try recording(speech[0].url), try recording(music)])
        }
        #expect(refused.map { String(describing: $0) }?.contains(music.path) == true, "\(String(describing: refused))")
    }

    @Test("a creation cancelled while it searches leaves no voice behind")
    func cancelled() async throws {
        let folder = try PrivateModels()
        let before = folder.voiceFiles
        let maker = VoiceMaker(kokoro: folder.kokoro, speaker: folder.speaker)
        let reader = try Self.reader()
        let started = Locked(false)
        let task = Task {
            try await maker.make(name: "halfway", from: reader, options: .init(candidates: 8)) { _ in started.withLock { $0 = true } }
        }
        while !started.withLock({ $0 }) { try await Task.sleep(for: .milliseconds(50)) }
        task.cancel()
        await #expect(throws: CancellationError.self) { try await task.value }
        #expect(folder.voiceFiles == before)
    }

    @Test("pitch is heard on real speech: a man's reading lower than a woman's prompts, each in a speaking range")
    func pitch() throws {
        func pitch(_ id: String) throws -> Double {
            let samples = try AudioFileReader(url: try Self.clip(id), outputFormat: AudioFormat(sampleRate: 16_000, channels: 1)).readAll().samples
            return try #require(Pitch.median(of: samples, rate: 16_000))
        }
        let man = try pitch("pocketsphinx/librivox-0920")
        let woman = try pitch("asterisk-en/vm-newuser")
        #expect((70...160).contains(man) && (160...300).contains(woman), "\(man) Hz, \(woman) Hz")
        #expect(Pitch.median(of: [Float](repeating: 0, count: 16_000), rate: 16_000) == nil)
    }
}
