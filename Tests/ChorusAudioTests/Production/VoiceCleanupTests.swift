import ChorusFixtures
import ChorusTestSupport
import Foundation
import Testing

@testable import ChorusAudio

@Suite("Voice-note clean-up")
struct VoiceCleanupTests {
    static let format = AudioFormat(sampleRate: 44_100, channels: 1)

    /// A phone recording: two stretches of voice 2.5 s of room noise apart, with 30 Hz rumble and hiss under all of it
    /// and four clicks in the first stretch. Returns it and where the clicks are.
    static func phoneRecording() -> (AudioBuffer, clicks: [Int]) {
        let voice = { (seed: UInt64) in SignalGenerator.speechLike(fundamental: 160, seconds: 2, format: format, seed: seed, amplitude: 0.4) }
        var recording = SignalGenerator.concatenate([voice(1), SignalGenerator.silence(seconds: 2.5, format: format), voice(2)])
        var random = SplitMix(seed: 9)
        for index in recording.samples.indices {
            recording.samples[index] += Float(0.1 * sin(2 * Double.pi * 30 * Double(index) / 44_100)) + Float(0.02 * (2 * random.next() - 1))
        }
        let clicks = [20_000, 40_000, 60_000, 80_000]
        for click in clicks { recording.samples[click] += 0.8 }
        return (recording, clicks)
    }

    /// The level at `frequency` (Goertzel), dB.
    static func level(_ samples: ArraySlice<Float>, at frequency: Double) -> Double {
        let coefficient = 2 * cos(2 * Double.pi * frequency / 44_100)
        var (previous, beforePrevious) = (0.0, 0.0)
        for sample in samples {
            let value = Double(sample) + coefficient * previous - beforePrevious
            beforePrevious = previous
            previous = value
        }
        let power = previous * previous + beforePrevious * beforePrevious - coefficient * previous * beforePrevious
        return 10 * log10(max(power, 1e-20) / Double(samples.count * samples.count))
    }

    /// RMS of 50 ms windows, dB, sorted.
    static func windowLevels(_ samples: [Float]) -> [Double] {
        stride(from: 0, to: samples.count - 2_205, by: 2_205).map { start in
            let window = samples[start..<(start + 2_205)]
            return 10 * log10(max(1e-12, window.reduce(0) { $0 + Double($1 * $1) } / 2_205))
        }.sorted()
    }

    @Test("rumble, hiss and clicks go down, the long pause is shortened to 0.7 s, the voice stays (FFmpeg's filters in process)")
    func phoneNote() throws {
        let (recording, clicks) = Self.phoneRecording()
        let cleaned = try VoiceCleanup().apply(to: recording, subject: "note.m4a")
        // The 2.5 s pause becomes 0.7 s; nothing else is cut.
        let removed = Double(recording.frameCount - cleaned.frameCount) / 44_100
        #expect(removed > 1.6 && removed < 1.85, "\(removed) s removed")
        // Rumble against the voice's fundamental: at least 12 dB lower than it was.
        let first = 0..<88_200
        let rumbleBefore = Self.level(recording.samples[first], at: 30) - Self.level(recording.samples[first], at: 160)
        let rumbleAfter = Self.level(cleaned.samples[first], at: 30) - Self.level(cleaned.samples[first], at: 160)
        #expect(rumbleBefore - rumbleAfter > 12, "rumble relative to the voice: \(rumbleBefore) dB before, \(rumbleAfter) dB after")
        // The noise floor (the quietest tenth of 50 ms windows) against the voice (the loudest tenth): 6 dB more apart.
        func spread(_ samples: [Float]) -> Double {
            let levels = Self.windowLevels(samples)
            return levels[levels.count * 9 / 10] - levels[levels.count / 10]
        }
        #expect(
            spread(cleaned.samples) - spread(recording.samples) > 6,
            "voice-to-floor \(spread(recording.samples)) dB before, \(spread(cleaned.samples)) dB after")
        // The clicks (in the first stretch, where nothing moved): no jump near them as large as the click.
        for click in clicks.prefix(2) {
            let around = (click - 40)..<(click + 40)
            let before = around.map { abs(recording.samples[$0 + 1] - recording.samples[$0]) }.max()!
            let after = around.map { abs(cleaned.samples[$0 + 1] - cleaned.samples[$0]) }.max()!
            #expect(after < before / 3, "at \(click): steepest step \(before) before, \(after) after")
        }
    }

    @Test("settings: each step can be left out; bad settings name their field; stereo at any rate")
    func settings() async throws {
        let (recording, _) = Self.phoneRecording()
        var keepPauses = VoiceCleanup()
        keepPauses.maxSilenceMilliseconds = nil
        #expect(try keepPauses.apply(to: recording, subject: "x").frameCount == recording.frameCount)
        let off = VoiceCleanup(highpassHz: 0, noiseReductionDB: 0, declick: false, level: false, maxSilenceMilliseconds: nil)
        #expect(try off.apply(to: recording, subject: "x").samples == recording.samples)
        let stereo = AudioBuffer(
            format: AudioFormat(sampleRate: 48_000, channels: 2),
            samples: SignalGenerator.tone(frequency: 300, amplitude: 0.3, seconds: 1, format: AudioFormat(sampleRate: 48_000, channels: 2)).samples)
        #expect(try VoiceCleanup().apply(to: stereo, subject: "x").format.channels == 2)
        for (cleanup, field) in [
            (VoiceCleanup(highpassHz: 500), "cleanup.highpass_hz"), (VoiceCleanup(noiseReductionDB: -1), "cleanup.noise_reduction_db"),
            (VoiceCleanup(maxSilenceMilliseconds: 50), "cleanup.max_silence_ms"),
        ] {
            await expectAudioError(.invalidArgument, mentioning: [field]) { try cleanup.validate() }
        }
        #expect(try VoiceCleanup.requested(on: nil) == nil && VoiceCleanup.requested(on: false) == nil)
        #expect(try VoiceCleanup.requested(on: nil, maxSilenceMilliseconds: 0)?.maxSilenceMilliseconds == nil)
    }
}
