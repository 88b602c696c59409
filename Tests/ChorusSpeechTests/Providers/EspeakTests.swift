import ChorusAudio
import ChorusTestSupport
import Testing

@testable import ChorusSpeech

/// The voices alone; the default voices assigned and a conversation rendered are tested in ChorusConversationTests.
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
}
