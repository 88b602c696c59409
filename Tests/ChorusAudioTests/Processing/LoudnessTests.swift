import ChorusFixtures
import ChorusTestSupport
import Foundation
import Testing

@testable import ChorusAudio

@Suite("Loudness normalization")
struct LoudnessTests {
    @Test(
        "clips at very different levels all land within ±1 LU of the target with true peak ≤ −1 dBTP",
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
        #expect(abs(measured.integrated! - -16) <= 0.1, "\(measured.integrated!) LUFS")
    }

    @Test(
        "heavily limited voices land on the target within 0.1 LU (libebur128), true peak under the ceiling",
        arguments: [(44_100, 1, UInt64(1)), (44_100, 2, 2), (24_000, 1, 3), (48_000, 2, 4)])
    func limitedOnTarget(rate: Int, channels: Int, seed: UInt64) throws {
        // A peaky voice (crest factor like espeak-ng's) that needs 5–10 dB of limiting to reach −14 LUFS.
        let format = AudioFormat(sampleRate: rate, channels: channels)
        var clip = SignalGenerator.speechLike(fundamental: 110 + 30 * Double(seed), seconds: 2.5, format: format, seed: seed, amplitude: 0.3)
        for index in clip.samples.indices where (index / channels) % 157 < 3 { clip.samples[index] *= 3 }
        let result = try LoudnessNormalizer(targetLUFS: -14).normalize(&clip)
        let measured = try referenceLoudness(clip)
        #expect(result.limiterDB < -3, "the limiter should have worked: \(result.limiterDB) dB")
        #expect(measured.truePeak <= -1, "\(measured.truePeak) dBTP")
        #expect(abs(measured.integrated! - -14) <= 0.1, "\(measured.integrated!) LUFS \(result)")
        #expect(abs(result.truePeak - measured.truePeak) < LoudnessNormalizer.meterMargin, "\(result.truePeak) vs \(measured.truePeak)")
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

    /// The true peak by the definition `TruePeak` implements, computed plainly in Double: every interval, every
    /// phase (4×, or 2× from 96 kHz), the 12-tap Hann-windowed sinc, silence outside the clip. dBTP.
    static func plainTruePeak(_ clip: AudioBuffer) -> Double {
        let channels = clip.format.channels
        let frames = clip.frameCount
        let factor = clip.format.sampleRate >= 96_000 ? 2 : 4
        func weight(_ distance: Double) -> Double {
            let sinc = distance == 0 ? 1 : sin(.pi * distance) / (.pi * distance)
            return sinc * 0.5 * (1 + cos(.pi * distance / 6))
        }
        var highest = Double(clip.peak)
        for channel in 0..<channels {
            func sample(_ frame: Int) -> Double { frame < 0 || frame >= frames ? 0 : Double(clip.samples[frame * channels + channel]) }
            for start in 0..<max(0, frames - 1) {
                for phase in 1..<factor {
                    let offset = Double(phase) / Double(factor)
                    let value = (-5...6).reduce(0.0) { $0 + weight(Double($1) - offset) * sample(start + $1) }
                    highest = max(highest, abs(value))
                }
            }
        }
        return 20 * log10(highest)
    }

    @Test(
        "the true-peak estimate equals the plain computation (Double, every interval and phase), skipping or not: mono, stereo, 2x at 96 kHz, limited, every length near the block sizes"
    )
    func truePeakExact() throws {
        for (rate, channels) in [(44_100, 1), (48_000, 2), (96_000, 1)] {
            let format = AudioFormat(sampleRate: rate, channels: channels)
            var long = SignalGenerator.speechLike(fundamental: 150, seconds: 0.4, format: format, seed: 5, amplitude: 0.8)
            for index in long.samples.indices where index % 7 == 0 { long.samples[index] *= 1.9 }
            for limited in [false, true] {
                if limited { _ = long.samples.withUnsafeMutableBufferPointer { PeakLimiter(format: format, ceiling: 0.7).process($0) } }
                let estimate = TruePeak.estimate(long)
                #expect(estimate == TruePeak.estimate(long, skipQuiet: false))
                #expect(abs(estimate - Self.plainTruePeak(long)) < 1e-4, "\(rate) Hz, \(channels) channels, limited: \(limited)")
            }
            // Smooth, loud and one-sided (a low tone on a negative offset): the blocks near the top are skipped by the
            // range of their samples, not by their magnitude; the highest interval must still be found.
            var smooth = AudioBuffer(
                format: format,
                samples: (0..<4_000 * channels).map { index -> Float in
                    let tone: Double = 0.5 * sin(Double(index / channels) * 0.013)
                    let ripple: Double = 0.02 * sin(Double(index) * 2.6)
                    return Float(-0.45 + tone + ripple)
                })
            smooth.samples[1_234 * channels] = -0.97
            #expect(TruePeak.estimate(smooth) == TruePeak.estimate(smooth, skipQuiet: false), "\(rate) Hz, smooth")
            #expect(abs(TruePeak.estimate(smooth) - Self.plainTruePeak(smooth)) < 1e-4, "\(rate) Hz, smooth")
            // Random smooth signals on an offset at several levels: skipping by the range never changes the result.
            var random = SplitMix(seed: UInt64(rate))
            for level in [0.1, 0.5, 0.95] {
                var phase = 0.0
                let samples = (0..<3_000 * channels).map { _ -> Float in
                    phase += 0.002 + 0.05 * random.next()
                    return Float(level * (0.4 + 0.55 * sin(phase)) + 0.003 * (random.next() - 0.5))
                }
                let clip = AudioBuffer(format: format, samples: samples)
                #expect(TruePeak.estimate(clip) == TruePeak.estimate(clip, skipQuiet: false), "\(rate) Hz, level \(level)")
            }
            // Two equal loud samples side by side (an inter-sample peak above them, always) at every position of short
            // clips: the edges of the 8- and 32-interval groups.
            for frames in 2...80 {
                for loud in stride(from: 0, to: frames - 1, by: 3) {
                    var clip = AudioBuffer(format: format, samples: (0..<frames * channels).map { Float(sin(Double($0) * 2.7)) * 0.3 })
                    clip.samples[loud * channels] = 0.95
                    clip.samples[(loud + 1) * channels] = 0.95
                    let estimate = TruePeak.estimate(clip)
                    #expect(estimate > 20 * log10(0.95) + 0.5, "\(frames) frames, loud at \(loud): \(estimate)")
                    #expect(estimate == TruePeak.estimate(clip, skipQuiet: false), "\(frames) frames, loud at \(loud)")
                    #expect(abs(estimate - Self.plainTruePeak(clip)) < 1e-4, "\(frames) frames, loud at \(loud)")
                }
            }
        }
    }

    @Test("the fast true-peak estimate agrees with libebur128 on stereo at 48 kHz and on limited audio")
    func truePeakAgreesStereoLimited() throws {
        let format = AudioFormat(sampleRate: 48_000, channels: 2)
        var clip = SignalGenerator.speechLike(fundamental: 170, seconds: 1.5, format: format, seed: 9, amplitude: 1.6)
        for index in clip.samples.indices where index % 2 == 1 { clip.samples[index] *= 0.7 }
        let estimateBefore = TruePeak.estimate(clip)
        // After limiting most loud samples sit at the ceiling: every block is computed.
        _ = clip.samples.withUnsafeMutableBufferPointer { PeakLimiter(format: format, ceiling: 0.8).process($0) }
        let estimate = TruePeak.estimate(clip)
        let reference = try referenceLoudness(clip).truePeak
        #expect(estimateBefore > 0 && estimate < estimateBefore)
        #expect(abs(estimate - reference) < LoudnessNormalizer.meterMargin, "\(estimate) vs \(reference)")
        #expect(estimate >= 20 * log10(Double(clip.peak)))
    }

    /// `channels` different voices interleaved, quiet passages included (so both gates matter), at `rate`.
    private func multiVoice(rate: Int, channels: Int, seconds: Double) -> AudioBuffer {
        let mono = AudioFormat(sampleRate: rate, channels: 1)
        var voices: [AudioBuffer] = []
        for channel in 0..<channels {
            let level = 0.6 / Double(channel + 1)
            let loud = SignalGenerator.speechLike(
                fundamental: 110 + 60 * Double(channel), seconds: seconds / 2, format: mono,
                seed: UInt64(channel + 1), amplitude: level)
            let hum = SignalGenerator.tone(frequency: 40, amplitude: 0.002, seconds: seconds / 4, format: mono)  // far below the relative gate
            let quiet = SignalGenerator.speechLike(
                fundamental: 90 + 70 * Double(channel), seconds: seconds / 4, format: mono,
                seed: UInt64(channel + 7), amplitude: 0.2)
            voices.append(SignalGenerator.concatenate([loud, hum, quiet]))
        }
        let frames = voices.map { $0.frameCount }.min()!
        var samples = [Float](repeating: 0, count: frames * channels)
        for frame in 0..<frames { for channel in 0..<channels { samples[frame * channels + channel] = voices[channel].samples[frame] } }
        return AudioBuffer(format: AudioFormat(sampleRate: rate, channels: channels), samples: samples)
    }

    @Test(
        "integrated loudness agrees with libebur128 to 0.001 LU at every rate, mono to 5.1, fed in odd chunks",
        arguments: [8_000, 11_025, 16_000, 22_050, 24_000, 32_000, 44_100, 48_000, 96_000])
    func integratedAgreesWithLibebur128(rate: Int) throws {
        for channels in [1, 2, 4, 5, 6] {
            let clip = multiVoice(rate: rate, channels: channels, seconds: 4.3)
            let reference = try LoudnessMeter(format: clip.format, truePeak: false)
            try clip.samples.withUnsafeBufferPointer { try reference.add($0) }
            var meter = IntegratedLoudness(format: clip.format)
            clip.samples.withUnsafeBufferPointer { samples in
                // Chunks that straddle the 100 ms segments in every way.
                var start = 0
                var size = 1
                while start < clip.frameCount {
                    let end = min(clip.frameCount, start + size)
                    meter.add(UnsafeBufferPointer(rebasing: samples[(start * channels)..<(end * channels)]))
                    start = end
                    size = size * 3 % 7_919 + 1
                }
            }
            // All at once: most of it filtered as eight stretches side by side.
            var whole = IntegratedLoudness(format: clip.format)
            clip.samples.withUnsafeBufferPointer { whole.add($0) }
            let expected = try #require(try reference.integratedLoudness())
            let measured = try #require(meter.loudness())
            let measuredWhole = try #require(whole.loudness())
            #expect(abs(measured - expected) < 0.001, "\(rate) Hz, \(channels) channels, in chunks: \(measured) vs libebur128 \(expected)")
            #expect(abs(measuredWhole - expected) < 0.001, "\(rate) Hz, \(channels) channels, whole: \(measuredWhole) vs libebur128 \(expected)")
        }
    }

    @Test("integrated loudness is nil, like libebur128's, for silence and for less than 400 ms")
    func integratedGates() throws {
        for clip in [
            SignalGenerator.silence(seconds: 2, format: .speech),
            SignalGenerator.tone(frequency: 1_000, amplitude: 0.5, seconds: 0.39, format: .speech),
            SignalGenerator.tone(frequency: 1_000, amplitude: 0.00001, seconds: 2, format: .speech),
        ] {
            var meter = IntegratedLoudness(format: clip.format)
            clip.samples.withUnsafeBufferPointer { meter.add($0) }
            let reference = try LoudnessMeter(format: clip.format, truePeak: false)
            try clip.samples.withUnsafeBufferPointer { try reference.add($0) }
            let expected = try reference.integratedLoudness()
            #expect(meter.loudness() == nil && expected == nil, "\(clip.duration) s, peak \(clip.peak)")
        }
        // BS.1770's calibration: a 997 Hz sine of peak −20 dBFS (RMS −23.01 dB) reads −23.01 LUFS.
        let sine = SignalGenerator.tone(frequency: 997, amplitude: 0.1, seconds: 3, format: AudioFormat(sampleRate: 48_000, channels: 1))
        var meter = IntegratedLoudness(format: sine.format)
        sine.samples.withUnsafeBufferPointer { meter.add($0) }
        #expect(abs(try #require(meter.loudness()) - -23.01) < 0.05)
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
