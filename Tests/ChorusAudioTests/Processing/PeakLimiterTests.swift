import ChorusFixtures
import Foundation
import Testing

@testable import ChorusAudio

@Suite("Peak limiter")
struct PeakLimiterTests {
    @Test("no sample ever exceeds the ceiling, whatever the input", arguments: [1, 2])
    func neverAboveCeiling(channels: Int) {
        let format = AudioFormat(sampleRate: 44_100, channels: channels)
        var random = SplitMix(seed: 42)
        var samples = (0..<(44_100 * channels)).map { _ in Float(random.next() * 3 - 1.5) }
        for spike in stride(from: 1_000, to: 44_000, by: 3_001) { samples[spike * channels] = 8 }  // isolated spikes
        let ceiling: Float = 0.7
        let reduction = samples.withUnsafeMutableBufferPointer { PeakLimiter(format: format, ceiling: ceiling).process($0) }
        #expect(samples.allSatisfy { abs($0) <= ceiling * 1.000_001 })
        #expect(reduction < -20, "an 8.0 spike under a 0.7 ceiling needs over 21 dB: \(reduction)")
    }

    @Test("the gain moves smoothly: no jump larger than the look-ahead ramp allows, and stereo stays linked")
    func noGainJumps() {
        let format = AudioFormat(sampleRate: 48_000, channels: 2)
        var samples: [Float] = []
        for frame in 0..<48_000 {
            let level: Float = frame >= 20_000 && frame < 20_050 ? 2.0 : 0.5  // a 50-frame burst
            let tone = sin(Float(frame) * 0.05)
            samples += [level * tone, level * tone * 0.5]
        }
        let original = samples
        let limiter = PeakLimiter(format: format, ceiling: 0.8)
        _ = samples.withUnsafeMutableBufferPointer { limiter.process($0) }
        // Gain per frame from the louder channel; compare neighbours where the signal is not near zero.
        var previous: (frame: Int, gain: Float)?
        let window = format.frames(milliseconds: limiter.lookAheadMilliseconds)
        for frame in 0..<48_000 where abs(original[frame * 2]) > 0.05 {
            let gain = samples[frame * 2] / original[frame * 2]
            #expect(abs(samples[frame * 2 + 1] / original[frame * 2 + 1] - gain) < 1e-5, "channels are linked")
            // The attack is a moving average over the look-ahead window: at most 1/window of full scale per frame.
            if let previous {
                let allowed = Float(frame - previous.frame) / Float(window) + 1e-4
                #expect(abs(gain - previous.gain) <= allowed, "frames \(previous.frame)…\(frame): \(previous.gain) → \(gain)")
            }
            previous = (frame, gain)
        }
        // Before the burst's look-ahead nothing changes; long after it the gain has recovered.
        #expect(Array(samples[..<(19_000 * 2)]) == Array(original[..<(19_000 * 2)]))
        #expect(zip(samples[(40_000 * 2)...], original[(40_000 * 2)...]).allSatisfy { abs($0 - $1) < 1e-3 })
        #expect(samples.allSatisfy { abs($0) <= 0.8 * 1.000_001 })
    }

    @Test("audio already under the ceiling is untouched")
    func quietUntouched() {
        var samples = SignalGenerator.tone(frequency: 440, amplitude: 0.5, seconds: 0.5, format: .speech).samples
        let original = samples
        let reduction = samples.withUnsafeMutableBufferPointer { PeakLimiter(format: .speech, ceiling: 0.6).process($0) }
        #expect(reduction == 0 && samples == original)
    }

    @Test("the region-by-region limiter equals the plain frame-by-frame computation", arguments: [1, 2])
    func matchesPlainComputation(channels: Int) {
        let format = AudioFormat(sampleRate: 44_100, channels: channels)
        // Speech-like bursts boosted into the ceiling, separated by stretches long and short, so regions
        // merge, stand alone, and release fully or partly between them.
        var signal = SignalGenerator.concatenate([
            SignalGenerator.speechLike(fundamental: 140, seconds: 1.3, format: format, seed: 3),
            SignalGenerator.silence(seconds: 0.004, format: format),
            SignalGenerator.speechLike(fundamental: 210, seconds: 0.7, format: format, seed: 4),
            SignalGenerator.silence(seconds: 1.5, format: format),
            SignalGenerator.speechLike(fundamental: 110, seconds: 0.9, format: format, seed: 5),
        ]).samples
        let loudest = signal.map { abs($0) }.max()!
        for index in signal.indices { signal[index] *= 1.4 / loudest }
        for spike in [10, 44_100 + 300, signal.count / channels - 1] { signal[spike * channels] = 2 }  // at both ends too
        let limiter = PeakLimiter(format: format, ceiling: 0.8)
        var fast = signal
        let fastReduction = fast.withUnsafeMutableBufferPointer { limiter.process($0) }
        var plain = signal
        let plainReduction = plain.withUnsafeMutableBufferPointer { Self.plainLimit($0, limiter) }
        #expect(abs(fastReduction - plainReduction) < 1e-4)
        let worst = zip(fast, plain).map { abs($0 - $1) }.max()!
        let at = zip(fast, plain).map { abs($0 - $1) }.firstIndex(of: worst)!
        #expect(worst < 2e-6, "largest difference \(worst) at \(at): \(fast[at]) vs \(plain[at]), input \(signal[at])")
        #expect(fast.allSatisfy { abs($0) <= 0.8 * 1.000_001 })
    }

    @Test(
        "limiting `source × scale` into another buffer equals scaling first and limiting in place, to the bit, and the plain computation",
        arguments: [1, 2])
    func scaledIntoEqualsScaleThenLimit(channels: Int) {
        let format = AudioFormat(sampleRate: 24_000, channels: channels)
        // Not a whole number of 64-frame blocks; a burst, 1.2 s of silence (the release decays fully, so frames after
        // it are written as the plain scale), a second burst louder on the last channel, and a spike in the last block.
        var signal = SignalGenerator.concatenate([
            SignalGenerator.speechLike(fundamental: 170, seconds: 0.61, format: format, seed: 8, amplitude: 0.5),
            SignalGenerator.silence(seconds: 1.2, format: format),
            SignalGenerator.speechLike(fundamental: 120, seconds: 0.47, format: format, seed: 9, amplitude: 0.3),
        ]).samples
        let frames = signal.count / channels
        let secondBurst = frames - Int(0.47 * 24_000)
        for frame in secondBurst..<frames { signal[frame * channels + channels - 1] *= 1.6 }
        signal[(frames - 3) * channels + channels - 1] = 0.9
        let limiter = PeakLimiter(format: format, ceiling: 0.6)
        let peaks = signal.withUnsafeBufferPointer { PeakLimiter.blockPeaks($0, channels: channels) }
        #expect(peaks.count == (frames + 63) / 64)
        let loudest = signal.map { abs($0) }.max()!
        #expect(loudest * 0.5 < 0.6 && loudest * 1.9 > 0.6)
        for scale: Float in [0.5, 1, 1.9, 3.3] {  // under the ceiling, then more and more limited
            let scaled = signal.map { $0 * scale }
            var inPlace = scaled
            let inPlaceReduction = inPlace.withUnsafeMutableBufferPointer { limiter.process($0) }
            var fused = [Float](repeating: .nan, count: signal.count)
            let fusedReduction = signal.withUnsafeBufferPointer { source in
                fused.withUnsafeMutableBufferPointer { limiter.process(source, scaledBy: scale, into: $0, blockPeaks: peaks) }
            }
            #expect(fused.map(\.bitPattern) == inPlace.map(\.bitPattern), "scale \(scale)")
            #expect(fusedReduction == inPlaceReduction, "scale \(scale)")
            #expect((scale * loudest <= 0.6) == (fusedReduction == 0), "scale \(scale): \(fusedReduction) dB")
            // Against the plain frame-by-frame computation of the scaled signal (an independent reference).
            var plain = scaled
            _ = plain.withUnsafeMutableBufferPointer { Self.plainLimit($0, limiter) }
            #expect(zip(fused, plain).allSatisfy { abs($0 - $1) < 2e-6 }, "scale \(scale)")
        }
    }

    /// The limiter computed frame by frame over the whole clip, without regions: the reference.
    static func plainLimit(_ samples: UnsafeMutableBufferPointer<Float>, _ limiter: PeakLimiter) -> Double {
        let channels = limiter.format.channels
        let frames = samples.count / channels
        let window = max(1, limiter.format.frames(milliseconds: limiter.lookAheadMilliseconds))
        let needed = (0..<frames).map { frame -> Float in
            let peak = (0..<channels).map { abs(samples[frame * channels + $0]) }.max()!
            return peak > limiter.ceiling ? limiter.ceiling / peak : 1
        }
        // The minimum of `needed` over the window ahead.
        var ahead = [Float](repeating: 1, count: frames)
        for frame in 0..<frames {
            for later in frame..<min(frames, frame + window) where needed[later] < ahead[frame] { ahead[frame] = needed[later] }
        }
        let release = Float(exp(-1.0 / (Double(limiter.format.sampleRate) * Double(limiter.releaseMilliseconds) / 1000)))
        var deficit: Float = 0  // 1 − gain
        var deepest: Float = 1
        var sum = Double(window)  // of `ahead` over the last `window` frames, 1 before the clip
        for frame in 0..<frames {
            sum += Double(ahead[frame]) - (frame >= window ? Double(ahead[frame - window]) : 1)
            deficit = max(1 - Float(sum / Double(window)), deficit * release, 1 - needed[frame])
            deepest = min(deepest, 1 - deficit)
            for channel in 0..<channels { samples[frame * channels + channel] *= 1 - deficit }
        }
        return 20 * log10(Double(deepest))
    }
}
