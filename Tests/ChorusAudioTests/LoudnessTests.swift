import ChorusFixtures
import ChorusTestSupport
import Foundation
import Testing
@testable import ChorusAudio

@Suite("Loudness normalization")
struct LoudnessTests {
    @Test("clips at very different levels all land within ±1 LU of the target with true peak ≤ −1 dBTP",
          arguments: [0.01, 0.05, 0.2, 0.6, 0.95])
    func reachesTarget(amplitude: Double) throws {
        var clip = SignalGenerator.speechLike(fundamental: 150, seconds: 3, format: .speech, seed: 3, amplitude: amplitude)
        let result = try LoudnessNormalizer(targetLUFS: -16).normalize(&clip)
        let measured = try referenceLoudness(clip)
        #expect(abs(measured.integrated! - -16) <= 1, "\(measured.integrated!) LUFS")
        #expect(measured.truePeak <= -1, "\(measured.truePeak) dBTP")
        #expect(result.measured.method == .integrated)
    }

    @Test("a peaky clip is limited: loudness still on target, true peak under the ceiling")
    func limitsPeaks() throws {
        // Clicks on top of a quiet voice: gain alone would push the clicks far over 0 dBFS.
        var clip = SignalGenerator.speechLike(fundamental: 200, seconds: 3, format: .speech, seed: 9, amplitude: 0.05)
        for position in stride(from: 4_000, to: clip.frameCount, by: 11_025) {
            for offset in 0..<30 { clip.samples[position + offset] = offset % 2 == 0 ? 0.9 : -0.9 }
        }
        let result = try LoudnessNormalizer(targetLUFS: -16).normalize(&clip)
        let measured = try referenceLoudness(clip)
        #expect(result.limiterDB < -3, "the limiter should have worked: \(result.limiterDB) dB")
        #expect(measured.truePeak <= -1, "\(measured.truePeak) dBTP")
        #expect(abs(measured.integrated! - -16) <= 1, "\(measured.integrated!) LUFS")
    }

    @Test("a clip under 400 ms gets the same gain as a long clip of the same level")
    func shortClipFallback() throws {
        let format = AudioFormat.speech
        var short = SignalGenerator.tone(frequency: 1_000, amplitude: 0.1, seconds: 0.2, format: format)
        var long = SignalGenerator.tone(frequency: 1_000, amplitude: 0.1, seconds: 3, format: format)
        let shortResult = try LoudnessNormalizer().normalize(&short)
        let longResult = try LoudnessNormalizer().normalize(&long)
        #expect(shortResult.measured.method == .shortClip)
        #expect(abs(shortResult.gainDB - longResult.gainDB) < 0.5, "\(shortResult.gainDB) vs \(longResult.gainDB)")
    }

    @Test("digital silence is left alone")
    func silence() throws {
        var clip = SignalGenerator.silence(seconds: 1, format: .speech)
        let result = try LoudnessNormalizer().normalize(&clip)
        #expect(result.measured.method == .silent && result.gainDB == 0)
        #expect(clip.peak == 0)
    }

    @Test("the fast true-peak estimate agrees with libebur128's oversampling meter", arguments: [1, 2, 3, 4])
    func truePeakAgrees(seed: UInt64) throws {
        var clip = SignalGenerator.speechLike(fundamental: 120 + 40 * Double(seed), seconds: 2, format: .speech, seed: seed, amplitude: 0.9)
        // Add near-Nyquist content, where inter-sample peaks are largest.
        for index in stride(from: 0, to: clip.samples.count, by: 1) { clip.samples[index] += 0.05 * Float(sin(Double(index) * 2.9)) }
        let estimate = TruePeak.estimate(clip)
        let reference = try referenceLoudness(clip).truePeak
        #expect(abs(estimate - reference) < LoudnessNormalizer.meterMargin, "\(estimate) vs \(reference)")
    }

    @Test("trimming keeps at most 25 ms around the sound")
    func trimming() {
        let format = AudioFormat.speech
        let clip = SignalGenerator.concatenate([
            SignalGenerator.silence(seconds: 0.5, format: format),
            SignalGenerator.tone(frequency: 300, amplitude: 0.5, seconds: 1, format: format),
            SignalGenerator.silence(seconds: 0.7, format: format),
        ])
        let range = SilenceTrimmer().soundRange(of: clip)
        let margin = format.frames(milliseconds: 25)
        #expect(range.lowerBound >= 22_050 - margin - 2 && range.lowerBound <= 22_050 - margin + 2)
        #expect(range.upperBound >= 66_150 + margin - 2 && range.upperBound <= 66_150 + margin + 2)
    }
}
