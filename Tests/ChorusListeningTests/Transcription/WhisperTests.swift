import ChorusAudio
import ChorusFixtures
import ChorusSpeechTestSupport
import ChorusTestSupport
import Foundation
import Testing

@testable import ChorusListening
@testable import ChorusSpeech
@testable import ChorusSupport
@testable import ChorusText
@testable import ChorusWire

/// Offline transcription on ONNX Runtime with the model set-up converted from CTranslate2's Whisper tiny.en
/// (`scripts/whisper_to_onnx.py`): real speech in, words out; broken models refused with the file and the reason.
///
/// (The speech it hears: `FliteSpeech`. ONNX Runtime's int8 products are tested in ChorusInferenceTests, the engine's
/// transcript cache in ChorusConversationTests.)
@Suite("Whisper offline transcription (ONNX Runtime)")
struct WhisperTests {
    /// One recognizer for the suite (loading takes about a second per lane), with two lanes: long audio is heard on both.
    /// Loaded on a thread of its own the first time a test asks (`StartedOnce`): a load inside a static initializer held
    /// a cooperative thread, and every test waiting for it another, for seconds under AddressSanitizer.
    static let loaded = StartedOnce<Result<WhisperRecognizer, any Error>> {
        Result { try WhisperRecognizer(model: try WhisperModel.named(WhisperModel.defaultName), threads: 2) }
    }

    static func recognizer() async throws -> WhisperRecognizer { try await loaded.value.get() }

    @Test("the set-up model transcribes Flite's sentence nearly word for word, each word timed near Flite's own times")
    func transcribesSpeech() async throws {
        let recognizer = try await Self.recognizer()
        #expect(recognizer.model.isEnglishOnly && recognizer.model.timesTokens && recognizer.model.melBands == 80)
        let (samples, spoken) = try await FliteSpeech.speech()
        let transcript = try await recognizer.transcribe(samples)
        // tiny.en hears Flite's synthetic voice imperfectly ("…move to half past four": 1 of 16 words, greedy);
        // this checks the whole path, accuracy is measured in the benchmarks.
        let rate = WordErrors.rate(transcript.text, FliteSpeech.sentence)
        #expect(rate <= 0.15, "\(transcript.text) (word error rate \(rate))")
        #expect(
            WordErrors.normalized(transcript.text).starts(with: WordErrors.normalized("The quick brown fox jumps over the lazy dog")),
            "\(transcript.text)")
        #expect(transcript.language == "en")
        #expect(abs(transcript.duration - Double(samples.count) / 16_000) < 0.001)
        // Words in order, inside the audio, and (matched by text) starting near where Flite says it spoke them.
        let words = transcript.words
        #expect(words.count >= 14, "\(words)")
        #expect(zip(words, words.dropFirst()).allSatisfy { $0.start <= $1.start && $0.start <= $0.end })
        #expect(words.allSatisfy { $0.start >= 0 && $0.end <= transcript.duration + 0.05 })
        var offsets: [Double] = []
        var remaining = spoken[...]
        for word in words {
            guard let index = remaining.firstIndex(where: { WordErrors.normalized($0.word) == WordErrors.normalized(word.word) }) else { continue }
            offsets.append(abs(remaining[index].start - word.start))
            remaining = remaining[(index + 1)...]
        }
        #expect(offsets.count >= 14, "matched \(offsets.count) of \(words.count)")
        let median = offsets.sorted()[offsets.count / 2]
        #expect(median < 0.35, "median start offset \(median) s: \(offsets)")
    }

    @Test("audio longer than Whisper's 30 s window is cut at quiet moments and every piece transcribed, times from the start")
    func longAudio() async throws {
        let recognizer = try await Self.recognizer()
        // Eight different sentences (one said eight times is text that repeats itself, which Whisper's fallback
        // samples again at five temperatures: a test of the fallback, not of long audio), a second apart: about 45 s.
        let sentences: [(text: String, key: String)] = [
            (FliteSpeech.sentence, "fox"),
            ("My grandmother baked an apple pie on Sunday, and the whole family came over for dinner.", "grandmother"),
            ("The train to Boston leaves at noon, so we should pack our bags before breakfast.", "boston"),
            ("Please bring an umbrella to school, because the weather report says it might rain later.", "umbrella"),
            ("The children played football in the garden until the sun went down behind the hills.", "football"),
            ("We watched the sunset from the top of the mountain and then walked slowly back home.", "mountain"),
            ("The doctor said that you should drink more water and get some sleep every night.", "doctor"),
            ("The library closes early on Friday, so return your books before the end of the week.", "library"),
        ]
        let pause = [Float](repeating: 0, count: 16_000)
        var long: [Float] = []
        var keys: [(word: String, start: Double)] = []  // where Flite says each sentence's key word, in the long audio
        for sentence in sentences {
            let (samples, words) = try await FliteSpeech.speech(sentence.text)
            let said = try #require(words.first { WordErrors.normalized($0.word) == [sentence.key] }, "\(sentence.key) in \(words)")
            keys.append((sentence.key, Double(long.count) / 16_000 + said.start))
            long += samples + pause
        }
        #expect(long.count > 40 * 16_000)
        let cuts = SpeechChunks.ranges(of: long, rate: 16_000)
        #expect(cuts.count == 2 && cuts.first?.lowerBound == 0 && cuts.last?.upperBound == long.count)
        for cut in cuts.dropFirst() {
            #expect(
                long[max(0, cut.lowerBound - 160)..<min(long.count, cut.lowerBound + 160)].allSatisfy { $0 == 0 },
                "cut at \(cut.lowerBound) is not in a pause")
        }
        let transcript = try await recognizer.transcribe(long)
        // Each key word heard once, where Flite said it (from the start of the whole audio, whichever piece heard it).
        let heard = keys.filter { key in
            transcript.words.contains { WordErrors.normalized($0.word) == [key.word] && abs($0.start - key.start) < 0.5 }
        }
        #expect(heard.count >= 7 && heard.last?.word == "library", "\(keys) in \(transcript.words)")
        #expect(zip(transcript.words, transcript.words.dropFirst()).allSatisfy { $0.start <= $1.start })
    }

    @Test(
        "pieces decoded side by side give exactly what each gives alone: the same tokens, words, times and measures — one of them heard in two windows, one a word said eight times (text that repeats itself: the fallback samples it again)"
    )
    func piecesTogether() async throws {
        let recognizer = try await Self.recognizer()
        let model = recognizer.model
        let (fox, _) = try await FliteSpeech.speech()
        let (train, _) = try await FliteSpeech.speech(
            "The train to Boston leaves at noon, so we should pack our bags before breakfast.", voice: "slt")
        let pause = [Float](repeating: 0, count: 8_000)
        var long: [Float] = []  // different sentences (the same one again is text that repeats itself: the fallback)
        for sentence in [
            "My grandmother baked an apple pie on Sunday, and the whole family came over for dinner.",
            "Please bring an umbrella to school, because the weather report says it might rain later.",
            "The children played football in the garden until the sun went down behind the hills.",
            "We watched the sunset from the top of the mountain and then walked slowly back home.",
            "The doctor said that you should drink more water and get some sleep every night.",
        ] {
            long += try await FliteSpeech.speech(sentence).0 + pause
        }
        long += train  // over a window: heard in two
        let (again, _) = try await FliteSpeech.speech("Okay. Okay. Okay. Okay. Okay. Okay. Okay. Okay.")
        let pieces = [fox, long, again, train + pause + fox].map { $0[...] }
        // On a thread of its own, as a lane decodes (a minute of decoding on a cooperative thread starved the tests
        // running beside this one).
        let (together, alone) = try await WorkerPool(threads: 1, name: "pieces-together").run {
            let decoder = try WhisperDecoder(networks: try WhisperNetworks(model: model))
            return (try decoder.decode(pieces, language: nil), try pieces.map { try decoder.decode([$0], language: nil)[0] })
        }
        #expect(long.count > 30 * 16_000 && together.count == pieces.count)
        for (index, (both, single)) in zip(together, alone).enumerated() {
            #expect(
                both.tokens == single.tokens && both.words == single.words && both.noSpeech == single.noSpeech
                    && both.averageLogProbability == single.averageLogProbability && both.language == single.language,
                "piece \(index): \(both.words.map(\.word)) against \(single.words.map(\.word))")
            #expect(!single.tokens.isEmpty, "piece \(index) heard nothing")
        }
    }

    @Test(
        "a word said again and again is heard every time: a loop is cut only where the decoding was stuck in it (out of tokens, or repeating itself after the fallback)"
    )
    func sameWordAgain() async throws {
        let recognizer = try await Self.recognizer()
        let (word, _) = try await FliteSpeech.speech("Word.")
        let pause = [Float](repeating: 0, count: 8_000)
        let heard = try await recognizer.transcribe(Array([[Float]](repeating: word + pause, count: 5).joined()))
        // tiny.en writes "Word." five or six times (it counts Flite's words generously elsewhere too); cutting every
        // loop of four or more left one.
        let words = WordErrors.normalized(heard.text)
        #expect((5...6).contains(words.count) && words.allSatisfy { $0 == "word" }, "\(heard.text)")
    }

    @Test(
        "audio is cut into one piece per lane once each piece would be 6 s or more, into a multiple of the lanes when one window is not enough, at the quietest moment near its even share, never over 28 s"
    )
    func piecesForLanes() {
        let rate = 16_000
        // Sound with a pause of 100 ms every 2.5 s: the cuts must fall in pauses.
        func audio(seconds: Double) -> [Float] {
            (0..<Int(seconds * Double(rate))).map { index in
                index % (rate * 5 / 2) < rate / 10 ? 0 : Float(sin(Double(index) * 0.07)) * 0.5
            }
        }
        func inPause(_ samples: [Float], _ cut: Int) -> Bool { samples[max(0, cut - 80)..<min(samples.count, cut + 80)].allSatisfy { $0 == 0 } }
        let short = audio(seconds: 10)
        #expect(SpeechChunks.ranges(of: short, rate: rate, pieces: 2) == [0..<short.count], "two pieces of 5 s: one")
        let twenty = audio(seconds: 20)
        let halves = SpeechChunks.ranges(of: twenty, rate: rate, pieces: 2)
        #expect(
            halves.count == 2 && halves[0].lowerBound == 0 && halves[1].upperBound == twenty.count && halves[0].upperBound == halves[1].lowerBound)
        #expect(halves.allSatisfy { $0.count >= 6 * rate } && inPause(twenty, halves[1].lowerBound), "\(halves)")
        #expect(SpeechChunks.ranges(of: twenty, rate: rate, pieces: 8).count == 3, "no piece under 6 s")
        let long = audio(seconds: 70)
        let pieces = SpeechChunks.ranges(of: long, rate: rate, pieces: 2)
        #expect(pieces.count == 3 && pieces.allSatisfy { $0.count <= 28 * rate && $0.count >= 18 * rate }, "\(pieces)")
        #expect(zip(pieces, pieces.dropFirst()).allSatisfy { $0.upperBound == $1.lowerBound && inPause(long, $1.lowerBound) })
        // Several pieces needed: as many as fill the lanes evenly (each lane hears as much), a window needed: one.
        let spread = SpeechChunks.ranges(of: long, rate: rate, lanes: 2)
        #expect(spread.count == 4 && spread.allSatisfy { $0.count <= 28 * rate && $0.count >= 14 * rate }, "\(spread)")
        #expect(zip(spread, spread.dropFirst()).allSatisfy { $0.upperBound == $1.lowerBound && inPause(long, $1.lowerBound) })
        #expect(SpeechChunks.ranges(of: audio(seconds: 173), rate: rate, lanes: 2).count == 8)
        #expect(SpeechChunks.ranges(of: audio(seconds: 173), rate: rate, lanes: 3).count == 9)
        #expect(SpeechChunks.ranges(of: twenty, rate: rate, lanes: 2).count == 1)
        #expect(SpeechChunks.ranges(of: audio(seconds: 30), rate: rate, lanes: 8).count == 5, "no piece under 6 s")
        let silent = [Float](repeating: 0, count: 61 * rate)
        let flat = SpeechChunks.ranges(of: silent, rate: rate)
        #expect(flat.count == 3 && flat.allSatisfy { $0.count <= 28 * rate } && flat.last?.upperBound == silent.count, "\(flat)")
    }

    @Test(
        "silence and a hum below -50 dBFS are not given to Whisper (it makes words up: \"you\"); speech after 20 s of silence is heard, timed from the start"
    )
    func silence() async throws {
        let recognizer = try await Self.recognizer()
        let quiet = try await recognizer.transcribe([Float](repeating: 0, count: 28 * 16_000))
        #expect(quiet.text.isEmpty && quiet.words.isEmpty && quiet.language == "en" && abs(quiet.duration - 28) < 0.001, "\(quiet.text)")
        let hum = (0..<(10 * 16_000)).map { Float(sin(Double($0) * 2 * .pi * 120 / 16_000)) * 0.0009 }  // -64 dBFS RMS
        #expect(try await recognizer.transcribe(hum).text.isEmpty)
        #expect(!SpeechChunks.isSilent(hum.map { $0 * 10 }[...], rate: 16_000), "-44 dBFS is sound")
        let (samples, _) = try await FliteSpeech.speech()
        let late = try await recognizer.transcribe([Float](repeating: 0, count: 20 * 16_000) + samples)
        #expect(WordErrors.rate(late.text, FliteSpeech.sentence) <= 0.15, "\(late.text)")
        #expect((late.words.first?.start ?? 0) > 19.5, "\(late.words.prefix(2))")
    }

    @Test(
        "noise and a ringing tone come back as no text: Whisper's annotations of sounds ((wind blowing), [BLANK_AUDIO], ♪) are left out, inside speech too"
    )
    func annotations() async throws {
        #expect(WhisperRecognizer.withoutAnnotations(" Hello (laughs) there [BLANK_AUDIO] ♪ ") == "Hello there")
        #expect(WhisperRecognizer.withoutAnnotations("[ Sound Effects ]").isEmpty)
        let heard = ["Hello", "(laughs)", "there,", "[", "Sound", "Effects", "]", "♪", "(wind", "blowing)."].enumerated()
            .map { WordTiming(word: $1, start: Double($0), end: Double($0) + 0.5) }
        #expect(WhisperRecognizer.withoutAnnotations(heard).map(\.word) == ["Hello", "there,"])
        #expect(WhisperRecognizer.withoutAnnotations(heard).map(\.start) == [0, 2])

        let recognizer = try await Self.recognizer()
        var state: UInt64 = 0x2545_F491_4F6C_DD1D  // xorshift: the same noise every run
        let noise = (0..<(4 * 16_000)).map { _ -> Float in
            state ^= state << 13
            state ^= state >> 7
            state ^= state << 17
            return Float(Double(state >> 11) / Double(1 << 53) * 0.17 - 0.085)  // white, -26 dBFS RMS
        }
        let ringing = (0..<(4 * 16_000)).map { index -> Float in
            let t = Double(index) / 16_000
            return Float(0.2 * sin(2 * .pi * 440 * t) * (0.5 + 0.5 * sin(2 * .pi * 2 * t)))
        }
        for (name, sound) in [("noise", noise), ("ringing", ringing)] {
            let heard = try await recognizer.transcribe(sound)
            #expect(heard.text.isEmpty && heard.words.isEmpty, "\(name): \(heard.text)")
        }
    }

    /// `text`'s words said one by one by Flite (each trimmed to its sound), mono 16 kHz: `lead` samples of silence, then
    /// each word followed by a pause drawn from `pauses` (seconds); and where each word begins (seconds).
    static func wordByWord(
        _ text: String, lead: Int, pauses: ClosedRange<Double>, random: inout WhisperDecoder.SplitMix
    ) async throws -> (samples: [Float], onsets: [Double]) {
        var samples = [Float](repeating: 0, count: lead)
        var onsets: [Double] = []
        for word in WordAligner.words(in: text).map(\.word) {
            let (clip, _) = try await FliteSpeech.speech(word)
            let buffer = AudioBuffer(format: AudioFormat(sampleRate: 16_000, channels: 1), samples: clip)
            let sound = SilenceTrimmer(thresholdDB: -40, marginMilliseconds: 0).soundRange(of: buffer)
            onsets.append(Double(samples.count) / 16_000)
            samples += clip[sound]
            samples += [Float](repeating: 0, count: Int(Double.random(in: pauses, using: &random) * 16_000))
        }
        return (samples, onsets)
    }

    @Test(
        "word onsets after pauses: words spoken one by one with random pauses are timed within 40 ms (median) of where they begin, closer than faster-whisper times them"
    )
    func onsets() async throws {
        let recognizer = try await Self.recognizer()
        let text = "Morning everyone, practice moved to half past four, bring water and snacks for the team."
        let written = WordAligner.words(in: text).map(\.word)
        var random = WhisperDecoder.SplitMix(seed: 0x9E37_79B9_7F4A_7C15)  // the same pauses every run
        let (samples, onsets) = try await Self.wordByWord(text, lead: 8_000, pauses: 0.25...0.80, random: &random)
        let duration = Double(samples.count) / 16_000
        func errors(_ words: [WordTiming]) -> [Double] { zip(words, onsets).map { abs($0.start - $1) }.sorted() }
        let raw = try await recognizer.transcribe(samples, sharpen: false).aligned(to: text)
        let heard = try await recognizer.transcribe(samples)
        let sharp = try await offCooperativeThreads { [samples] in SpeechOnsets.refine(heard.aligned(to: text), samples: samples, rate: 16_000) }
        #expect(sharp.map(\.word) == written && raw.count == written.count)
        let before = errors(raw)
        let after = errors(sharp)
        let median = after[after.count / 2]
        let ninety = after[after.count * 9 / 10]
        print(
            "onsets: \(written.count) words, Whisper's own times median \(Int(before[before.count / 2] * 1000)) ms / 90 % \(Int(before[before.count * 9 / 10] * 1000)) ms; sharpened median \(Int(median * 1000)) ms / 90 % \(Int(ninety * 1000)) ms"
        )
        // Whisper's word times come from its alignment heads (as OpenAI's and faster-whisper's do): on isolated words
        // they can put a word a pause late; the pauses then correct most of them, not all ("practice" here).
        #expect(
            median <= 0.040 && ninety <= 0.35,
            "\(zip(sharp, onsets).map { "\($0.word) \(Int(($0.start - $1) * 1000))" }) raw \(zip(raw, onsets).map { "\($0.word) \(Int(($0.start - $1) * 1000))" })"
        )
        // faster-whisper on the same weights and audio, its own word times aligned to the same words: Chorus's are closer.
        let scratch = try TemporaryDirectory(prefix: "chorus-onsets")
        let file = scratch.url.appendingPathComponent("onsets.wav")
        try AudioFileWriter.data(AudioBuffer(format: AudioFormat(sampleRate: 16_000, channels: 1), samples: samples), as: .wav).write(to: file)
        let referee = try await WhisperReferee.transcribe(file, model: "tiny.en")
        let theirs = errors(Transcript(text: referee.text, language: "en", duration: duration, words: referee.words).aligned(to: text))
        print("onsets: faster-whisper's median \(Int(theirs[theirs.count / 2] * 1000)) ms / 90 % \(Int(theirs[theirs.count * 9 / 10] * 1000)) ms")
        #expect(median <= theirs[theirs.count / 2] && ninety <= theirs[theirs.count * 9 / 10], "\(theirs)")
        #expect(sharp.allSatisfy { $0.end > $0.start && $0.end <= duration } && zip(sharp, sharp.dropFirst()).allSatisfy { $0.end <= $1.start })
    }

    @Test("text is written in Whisper's tokens as its own tokenizer writes them (Hugging Face's, faster-whisper's): tiny.en's and base's tables")
    func tokens() async throws {
        let texts = [
            " The quick brown fox jumps over the lazy dog.", " It's 4:30, we'll be late — isn't it? I'D say so.",
            " Pi is 3.14159; a million is 1,000,000 (roughly).", "  two  spaces,\nand a new line\n\nthen more   ",
            " Café naïve résumé, Grüße aus Köln!", " 日本語のテキストと English mixed.", " emoji 🎉🎉 and ... ellipses…",
            " don't DON'T 're 've 'll 'd 's 't 'm", "\tTabs\tand\rreturns", " Aisha's mom's 2nd call at 10am.",
            " the cat's\u{301} toy, it'\u{301}s",
        ]
        let tiny = try await Self.recognizer().networks.tokenizer
        let baseModel = try WhisperModel.named("whisper-base")
        let base = try WhisperTokenizer(url: baseModel.tokens, endOfText: baseModel.description.tokens.eot)
        for (tokenizer, name) in [(tiny, "tiny.en"), (base, "base")] {
            let theirs = try await WhisperReferee.tokens(texts, model: name)
            for (text, expected) in zip(texts, theirs) {
                let ours = try #require(tokenizer.tokens(of: text))
                #expect(tokenizer.text(of: ours) == text)
                if name == "tiny.en" {
                    #expect(ours == expected, "\(name): \(text.debugDescription): \(ours) vs \(expected)")
                } else {
                    // The multilingual table's merges in Hugging Face's file cannot reach some tokens the table has
                    // (" the" comes out as " " and "the"); OpenAI's tokenizer (tiktoken), whose ids are the merges'
                    // ranks, takes a piece that is a token whole, as Chorus does. The rest is the same.
                    #expect(
                        ours.count <= expected.count && tokenizer.text(of: expected) == text,
                        "\(name): \(text.debugDescription): \(ours) vs \(expected)")
                    let same = zip(ours, expected).prefix { $0 == $1 }.count
                    #expect(same > 0 || ours.count < expected.count, "\(name): \(text.debugDescription)")
                }
            }
        }
    }

    @Test(
        "known text timed without transcribing it, several messages to a window: words spoken one by one with pauses timed within 40 ms (median) of where they begin, sentences as close to Flite's own times as transcribing and matching"
    )
    func alignsKnownText() async throws {
        let recognizer = try await Self.recognizer()
        var random = WhisperDecoder.SplitMix(seed: 0x2545_F491_4F6C_DD1D)  // the same pauses every run
        // Three messages, each words said one by one with pauses between them (where each word begins is known).
        let texts = [
            "Morning everyone, practice moved to half past four.", "Bring water and snacks for the team!",
            "Dad's picking up Maya at 6:15, don't be late.",
        ]
        var messages: [(samples: [Float], text: String)] = []
        var onsets: [[Double]] = []
        for text in texts {
            let (samples, starts) = try await Self.wordByWord(text, lead: 4_000, pauses: 0.15...0.55, random: &random)
            messages.append((samples, text))
            onsets.append(starts)
        }
        let aligned = try await recognizer.align(together: messages)
        let heard = try await recognizer.transcribe(together: messages.map(\.samples))
        var ours: [Double] = []
        var matched: [Double] = []
        for (index, message) in messages.enumerated() {
            let transcript = try #require(aligned[index], "message \(index) was not aligned")
            let written = WordAligner.words(in: message.text).map(\.word)
            #expect(transcript.text == message.text && transcript.language == "en")
            #expect(abs(transcript.duration - Double(message.samples.count) / 16_000) < 0.001)
            let duration = transcript.duration
            #expect(transcript.words.allSatisfy { $0.start >= 0 && $0.start <= $0.end && $0.end <= duration }, "\(transcript.words)")
            let sharp = try await offCooperativeThreads { [message] in
                SpeechOnsets.refine(transcript.aligned(to: message.text), samples: message.samples, rate: 16_000)
            }
            let other = try await offCooperativeThreads { [message] in
                SpeechOnsets.refine(heard[index].aligned(to: message.text), samples: message.samples, rate: 16_000)
            }
            #expect(sharp.map(\.word) == written)
            // Every word of the text, each once: the words are the text's own.
            #expect(
                transcript.words.map { Transcript.key($0.word) }.joined(separator: " ")
                    == written.map { Transcript.key($0) }.joined(separator: " "), "\(transcript.words.map(\.word))")
            let off = zip(sharp, onsets[index]).filter { abs($0.start - $1) > 0.05 }.map { "\($0.word) \(Int(($0.start - $1) * 1000)) ms" }
            #expect(
                off.count <= 1,
                "message \(index): \(off); Whisper's: \(transcript.words.map { "\($0.word) \(Int($0.start * 1000))" }), onsets \(onsets[index].map { Int($0 * 1000) })"
            )
            ours += zip(sharp, onsets[index]).map { abs($0.start - $1) }
            matched += zip(other, onsets[index]).map { abs($0.start - $1) }
        }
        ours.sort()
        matched.sort()
        let median = ours[ours.count / 2]
        let ninety = ours[ours.count * 9 / 10]
        print(
            "aligned: \(ours.count) words, median \(Int(median * 1000)) ms / 90 % \(Int(ninety * 1000)) ms; transcribed and matched: median \(Int(matched[matched.count / 2] * 1000)) ms / 90 % \(Int(matched[matched.count * 9 / 10] * 1000)) ms"
        )
        #expect(median <= 0.040 && ninety <= 0.35, "\(ours)")
        #expect(median <= matched[matched.count / 2] + 0.01 && ninety <= matched[matched.count * 9 / 10] + 0.02, "\(matched)")
        // Sentences spoken on: Flite's own word times are the reference.
        var sentences: [(samples: [Float], text: String)] = []
        var spoken: [[WordTiming]] = []
        for text in [FliteSpeech.sentence, "My grandmother baked an apple pie on Sunday.", "The train to Boston leaves at noon."] {
            let (samples, words) = try await FliteSpeech.speech(text)
            sentences.append((samples, text))
            spoken.append(words)
        }
        let fluent = try await recognizer.align(together: sentences)
        let fluentHeard = try await recognizer.transcribe(together: sentences.map(\.samples))
        var fluentOurs: [Double] = []
        var fluentMatched: [Double] = []
        for (index, sentence) in sentences.enumerated() {
            let transcript = try #require(fluent[index])
            let sharp = SpeechOnsets.refine(transcript.aligned(to: sentence.text), samples: sentence.samples, rate: 16_000)
            let other = SpeechOnsets.refine(fluentHeard[index].aligned(to: sentence.text), samples: sentence.samples, rate: 16_000)
            #expect(sharp.count == spoken[index].count, "\(sharp.map(\.word)) vs \(spoken[index].map(\.word))")
            fluentOurs += zip(sharp, spoken[index]).map { abs($0.start - $1.start) }
            fluentMatched += zip(other, spoken[index]).map { abs($0.start - $1.start) }
        }
        fluentOurs.sort()
        fluentMatched.sort()
        print(
            "aligned, fluent: \(fluentOurs.count) words, median \(Int(fluentOurs[fluentOurs.count / 2] * 1000)) ms / 90 % \(Int(fluentOurs[fluentOurs.count * 9 / 10] * 1000)) ms; transcribed and matched: median \(Int(fluentMatched[fluentMatched.count / 2] * 1000)) ms / 90 % \(Int(fluentMatched[fluentMatched.count * 9 / 10] * 1000)) ms"
        )
        #expect(
            fluentOurs[fluentOurs.count / 2] <= max(0.06, fluentMatched[fluentMatched.count / 2] + 0.01)
                && fluentOurs[fluentOurs.count * 9 / 10] <= fluentMatched[fluentMatched.count * 9 / 10] + 0.05, "\(fluentOurs)")
        // What cannot be aligned is left to transcription; silence gets no words.
        let silent = [Float](repeating: 0, count: 16_000)
        let odd = try await recognizer.align(together: [
            (silent, "Nothing said."), (messages[0].samples, "…"), (Array(repeating: messages[0].samples, count: 8).joined().map { $0 }, texts[0]),
        ])
        #expect(odd[0]?.words == [] && odd[0]?.text == "Nothing said." && odd[1] == nil && odd[2] == nil, "\(odd)")
    }

    @Test("alignment: every written word once, in order, as written; misheard words keep the heard times, missing ones share the gaps")
    func alignment() async throws {
        let heard = [
            WordTiming(word: " the", start: 0.50, end: 0.62), WordTiming(word: " quick", start: 0.62, end: 0.90),
            WordTiming(word: " box", start: 0.95, end: 1.30), WordTiming(word: " um", start: 1.4, end: 1.5),
            WordTiming(word: " jumps.", start: 2.40, end: 2.80),
        ]
        let transcript = Transcript(text: "the quick box um jumps.", language: "en", duration: 3.2, words: heard)
        let words = transcript.aligned(to: "The quick brown fox jumps.")
        #expect(words.map(\.word) == ["The", "quick", "brown", "fox", "jumps"])
        #expect(words[0].start == 0.50 && words[1].start == 0.62 && words[4].start == 2.40, "\(words)")
        // "box" was heard for "brown" or "fox": one of them has its time, the other shares the stretch before "jumps".
        #expect(words[2].start >= 0.62 && words[3].start > words[2].start && words[3].start < 2.40, "\(words)")
        #expect(words[4].end <= 3.2 && zip(words, words.dropFirst()).allSatisfy { $0.end <= $1.start + 1e-9 })
        #expect(
            transcript.aligned(to: "") == [] && Transcript(text: "", language: "en", duration: 1, words: []).aligned(to: "Hello there").count == 2)
        let sentences = Transcript.sentences(
            of: "The quick brown fox jumps. Really?", words: transcript.aligned(to: "The quick brown fox jumps. Really?"))
        #expect(
            sentences.map(\.text) == ["The quick brown fox jumps.", "Really?"] && sentences[0].start == 0.5 && sentences[1].start >= sentences[0].end)
        // Ten minutes of words against a text of the same length stays cheap (one byte per pair); a few seconds of CPU
        // under AddressSanitizer, so on a thread of its own (a cooperative thread held that long stalls other tests).
        let many = (0..<1_500).map { WordTiming(word: "w\($0 % 97)", start: Double($0) * 0.4, end: Double($0) * 0.4 + 0.3) }
        let long = try await offCooperativeThreads {
            Transcript(text: "", language: "en", duration: 600, words: many).aligned(to: many.map(\.word).joined(separator: " "))
        }
        #expect(long.count == 1_500 && long.map(\.start) == many.map(\.start))
    }

    @Test("captions: one cue per segment, SubRip's comma, WebVTT's text escaped and never a blank line inside a cue")
    func captions() {
        let words = [
            WordTiming(word: "Fish", start: 0.5, end: 0.9), WordTiming(word: "<&>", start: 1.0, end: 1.2),
            WordTiming(word: "chips.", start: 1.3, end: 1.7),
            WordTiming(word: "Later", start: 3.0, end: 3.4),
        ]
        let transcription = Transcript(text: "Fish <&> chips. Later", language: "en", duration: 4, words: words).transcription
        #expect(transcription.language == "english" && transcription.segments?.map(\.text) == ["Fish <&> chips.", "Later"])
        #expect(
            TranscriptionFormat.vtt.render(transcription)
                == "WEBVTT\n\n1\n00:00:00.500 --> 00:00:01.700\nFish &lt;&amp;&gt; chips.\n\n2\n00:00:03.000 --> 00:00:03.400\nLater\n")
        #expect(
            TranscriptionFormat.srt.render(transcription)
                == "1\n00:00:00,500 --> 00:00:01,700\nFish <&> chips.\n\n2\n00:00:03,000 --> 00:00:03,400\nLater\n")
        #expect(TranscriptionFormat.json.render(transcription) == #"{"text":"Fish <&> chips. Later"}"# + "\n")
    }

    @Test("no audio is a clear error")
    func empty() async throws {
        let recognizer = try await Self.recognizer()
        await #expect(throws: VoiceError.self) { try await recognizer.transcribe([]) }
    }

    @Test(
        "a missing, truncated, foreign or hostile model file is an error naming the file and the reason, never a crash",
        arguments: BrokenModel.allCases)
    func brokenModel(_ broken: BrokenModel) async throws {
        let model = try WhisperModel.named(WhisperModel.defaultName)
        let scratch = try TemporaryDirectory(prefix: "chorus-models")
        let copy = scratch.url.appendingPathComponent("whisper-broken")
        try FileManager.default.createDirectory(at: copy, withIntermediateDirectories: true)
        for file in model.files {
            try FileManager.default.createSymbolicLink(at: copy.appendingPathComponent(file.lastPathComponent), withDestinationURL: file)
        }
        func replace(_ name: String, with data: Data?) throws {
            let file = copy.appendingPathComponent(name)
            try FileManager.default.removeItem(at: file)
            try data?.write(to: file)
        }
        func json(_ change: (inout [String: Any]) -> Void) throws -> Data {
            var object = try JSONSerialization.jsonObject(with: Data(contentsOf: model.descriptionFile)) as! [String: Any]
            change(&object)
            return try JSONSerialization.data(withJSONObject: object)
        }
        let encoder = try Data(contentsOf: model.encoder)
        switch broken {
        case .noDescription: try replace("model.json", with: nil)
        case .descriptionNotJSON: try replace("model.json", with: Data("{\"kind\": \"whisper\",".utf8))
        case .earlierConversion: try replace("model.json", with: try json { $0["converter_revision"] = 3 })
        case .fieldMissing: try replace("model.json", with: try json { $0["tokens"] = ["eot": 50256] })
        case .absurdDimension: try replace("model.json", with: try json { $0["n_mels"] = 81 })
        case .alignmentHeadOutOfRange: try replace("model.json", with: try json { $0["alignment_heads"] = [[9, 0]] })
        case .noDecoder: try replace("decoder.onnx", with: nil)
        case .truncatedEncoder: try replace("encoder.onnx", with: encoder.prefix(encoder.count / 2))
        case .textDecoder: try replace("decoder.onnx", with: Data(String(repeating: "not a model at all\n", count: 20).utf8))
        case .hostileLength: try replace("encoder.onnx", with: Data([0x3A, 0xFF, 0xFF, 0xFF, 0xFF, 0x0F] + [UInt8](repeating: 0, count: 90)))
        case .foreignGraph: try replace("encoder.onnx", with: try Data(contentsOf: PiperVoice.named(PiperVoice.defaultName).model))
        case .decoderAsEncoder: try replace("encoder.onnx", with: try Data(contentsOf: model.decoder))
        case .emptyGraph:
            try replace("encoder.onnx", with: ProtobufWriter.model(inputs: ["mel"], outputs: model.description.crossNames, metadata: [:]))
        case .badTokens: try replace("tokens.txt", with: Data("IQ== 0\nthis is not a token line\n".utf8))
        case .noTokens: try replace("tokens.txt", with: Data())
        }
        // Checked, then loaded: either refuses with a configuration error naming the file.
        let error = await #expect(throws: VoiceError.self) {
            let checked = try WhisperModel(folder: copy)
            _ = try await offCooperativeThreads { try WhisperRecognizer(model: checked, threads: 1) }
        }
        #expect(error?.kind == .configuration, "\(String(describing: error))")
        #expect(
            error?.message.contains(broken.names) == true && error?.message.contains(broken.reason) == true, "\(broken): \(String(describing: error))"
        )
    }

    /// The bad model files `brokenModel` tries, each with the file its error must name and a word of its reason.
    enum BrokenModel: CaseIterable, Sendable, CustomTestStringConvertible {
        case noDescription, descriptionNotJSON, earlierConversion, fieldMissing, absurdDimension, alignmentHeadOutOfRange
        case noDecoder, truncatedEncoder, textDecoder, hostileLength, foreignGraph, decoderAsEncoder, emptyGraph, badTokens, noTokens

        var names: String {
            switch self {
            case .noDescription, .descriptionNotJSON, .earlierConversion, .fieldMissing, .absurdDimension, .alignmentHeadOutOfRange: "model.json"
            case .noDecoder, .textDecoder: "decoder.onnx"
            case .truncatedEncoder, .hostileLength, .foreignGraph, .decoderAsEncoder, .emptyGraph: "encoder.onnx"
            case .badTokens, .noTokens: "tokens.txt"
            }
        }

        var reason: String {
            switch self {
            case .noDescription, .noDecoder: "cannot be read"
            case .descriptionNotJSON: "not a Whisper model's description"
            case .earlierConversion: "converter_revision"
            case .fieldMissing: "tokens.sot is missing"
            case .absurdDimension: "n_mels is 81"
            case .alignmentHeadOutOfRange: "alignment_heads"
            case .truncatedEncoder, .hostileLength: "truncated"
            case .textDecoder: "not a valid ONNX model"
            case .foreignGraph, .decoderAsEncoder: "not a Whisper encoder"
            case .emptyGraph: "cannot load it"
            case .badTokens: "line 2"
            case .noTokens: "0 tokens"
            }
        }

        var testDescription: String { "\(self)" }
    }

    @Test("a missing model is named with the models there and how to install the default")
    func missingModel() throws {
        let scratch = try TemporaryDirectory(prefix: "chorus-models")
        do {
            _ = try WhisperModel.named("whisper-huge", in: scratch.url)
            Issue.record("a missing model was found")
        } catch let error as VoiceError {
            #expect(error.message.contains("no model \"whisper-huge\"") && error.message.contains("none there"), "\(error.message)")
        }
        #expect(throws: VoiceError.self) { try WhisperModel.named("../etc", in: scratch.url) }
        #expect(WhisperModel.names().contains(WhisperModel.defaultName) && WhisperModel.names().contains("whisper-base"))
    }

    @Test("the converter refuses a truncated or foreign model.bin naming it, and leaves no output behind")
    func converterRefuses() async throws {
        let python = FileManager.default.homeDirectoryForCurrentUser.appendingPathComponent(".cache/chorus/setup/converter-venv/bin/python")
        try #require(FileManager.default.isExecutableFile(atPath: python.path), "scripts/setup.sh prepares the converter's Python")
        let scratch = try TemporaryDirectory(prefix: "chorus-convert")
        let source = scratch.url.appendingPathComponent("source")
        try FileManager.default.createDirectory(at: source, withIntermediateDirectories: true)
        // The CTranslate2 header of a Whisper model, cut off in its first variable.
        var header = Data([6, 0, 0, 0])
        header.append(contentsOf: [12, 0])
        header.append(Data("WhisperSpec\0".utf8))
        header.append(contentsOf: [3, 0, 0, 0])
        header.append(contentsOf: [148, 0, 0, 0, 9, 0])
        header.append(Data("decoder/a".utf8))
        try header.write(to: source.appendingPathComponent("model.bin"))
        let destination = scratch.url.appendingPathComponent("out")
        let run = try await ToolRun.run([python.path, Repository.file("scripts/whisper_to_onnx.py").path, source.path, destination.path])
        #expect(run.status == 1 && run.errors.contains("model.bin") && run.errors.contains("truncated"), "\(run.status) \(run.errors)")
        #expect(!FileManager.default.fileExists(atPath: destination.path))
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: scratch.url.path).filter { $0.hasPrefix(".whisper-") }
        #expect(leftovers.isEmpty)
        // Another kind of CTranslate2 model.
        var other = Data([6, 0, 0, 0, 16, 0])
        other.append(Data("TransformerSpec\0".utf8))
        other.append(contentsOf: [1, 0, 0, 0, 0, 0, 0, 0])
        try other.write(to: source.appendingPathComponent("model.bin"))
        let foreign = try await ToolRun.run([python.path, Repository.file("scripts/whisper_to_onnx.py").path, source.path, destination.path])
        #expect(foreign.status == 1 && foreign.errors.contains("not Whisper"), "\(foreign.errors)")
    }
}
