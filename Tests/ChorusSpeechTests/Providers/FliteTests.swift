import ChorusAudio
import ChorusTestSupport
import Testing

@testable import ChorusSpeech
@testable import ChorusText
@testable import ChorusWire

@Suite("Flite voices (offline)")
struct FliteTests {
    static let sentence = "The quick brown fox jumps over the lazy dog, and practice moved to half past four."

    func speak(_ voice: String, _ text: String = FliteTests.sentence) async throws -> (AudioBuffer, [WordTiming]) {
        let speech = try await FliteProvider().synthesize(SynthesisRequest(voice: voice, text: text, outputFormat: "pcm"))
        guard case .pcm(let buffer) = speech.audio else { throw VoiceError(.invalidResponse, provider: "flite", message: "not pcm") }
        return (buffer, speech.words ?? [])
    }

    @Test("every voice speaks offline at its own rate; slt, rms and awb differ in measured pitch")
    func voices() async throws {
        var pitches: [String: Double] = [:]
        for (voice, rate) in [("slt", 16_000), ("rms", 16_000), ("awb", 16_000), ("kal16", 16_000), ("kal", 8_000)] {
            let (buffer, words) = try await speak(voice)
            #expect(buffer.format.sampleRate == rate, "\(voice)")
            #expect(buffer.duration > 3 && buffer.duration < 8, "\(voice): \(buffer.duration) s")
            #expect(words.count == 16)
            pitches[voice] = medianPitch(buffer.frames(SilenceTrimmer().soundRange(of: buffer)))
        }
        #expect(pitches["slt"]! > 1.3 * pitches["rms"]!, "\(pitches)")
        #expect(pitches["slt"]! > 1.1 * pitches["awb"]!, "\(pitches)")
        #expect(abs(pitches["awb"]! - pitches["rms"]!) / pitches["awb"]! > 0.08, "\(pitches)")
        let listed = try await FliteProvider().voices()
        #expect(listed.map(\.id.description) == ["flite:slt", "flite:rms", "flite:awb", "flite:kal16", "flite:kal"])
        #expect(listed[0].details.contains("female") && listed[1].details.contains("male"))
    }

    @Test("the same text gives the same audio, whatever was spoken before it (Flite's noise is seeded per utterance)")
    func sameTextSameAudio() async throws {
        let (first, _) = try await speak("slt")
        _ = try await speak("slt", "Something else entirely, to move Flite's random numbers on.")
        _ = try await speak("awb")
        let (again, _) = try await speak("slt")
        let differing = zip(first.samples, again.samples).filter { $0 != $1 }.count  // not the arrays: printing them takes minutes
        #expect(first.samples.count == again.samples.count && differing == 0, "\(differing) samples differ")
    }

    @Test("rate and pitch settings change the audio; bad settings and voices are clear errors")
    func settings() async throws {
        let (normal, _) = try await speak("slt")
        let (fast, _) = try await speak("slt?rate=1.3")
        let (high, _) = try await speak("slt?pitch=1.3")
        #expect(fast.duration < normal.duration * 0.85, "\(fast.duration) vs \(normal.duration)")
        #expect(medianPitch(high) > medianPitch(normal) * 1.15)
        for (voice, kind) in [
            ("nobody", VoiceError.Kind.voiceNotFound), ("slt?rate=5", .badRequest), ("slt?speed=1", .badRequest),
            ("slt?rate=fast", .badRequest),
        ] {
            do {
                _ = try await speak(voice)
                Issue.record("expected an error for \(voice)")
            } catch let error as VoiceError {
                #expect(error.kind == kind && error.description.contains("flite"), "\(error)")
            }
        }
    }

    @Test("word timings are the text's words, in order, inside the clip", arguments: WordTimingTests.sentences)
    func wordTimings(sentence: String) async throws {
        let (buffer, words) = try await speak("slt", sentence)
        #expect(words.map(\.word) == WordAligner.words(in: sentence).map(\.word))
        var previous = 0.0
        for word in words {
            #expect(word.start >= previous - 1e-9 && word.end >= word.start && word.end <= buffer.duration + 1e-9, "\(word)")
            previous = word.start
        }
        #expect(words.filter { $0.end - $0.start > 0.02 }.count >= words.count * 3 / 4, "most words take time")
    }

    @Test("odd text never takes the process down: symbols, other scripts, a very long word, punctuation only")
    func oddText() async throws {
        for text in ["😀 🎉 ✨ hello", "你好，世界", String(repeating: "a", count: 300), "...", "--- *** ###", "R2-D2 & C-3PO @ 10:45pm #1"] {
            do {
                let (buffer, _) = try await speak("rms", text)
                #expect(buffer.frameCount > 0)
            } catch let error as VoiceError {
                #expect(error.provider == "flite", "\(error)")
            }
        }
    }
}
