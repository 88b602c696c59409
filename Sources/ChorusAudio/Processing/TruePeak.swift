import Foundation

/// A fast true-peak (inter-sample peak) estimate, in the spirit of ITU-R BS.1770 Annex 2:
/// the signal is interpolated 4× (2× at 96 kHz and above) with a 12-tap Hann-windowed sinc,
/// eight intervals at once, and only where the samples under the taps are loud enough for an
/// interpolated value to exceed the highest found so far (a strict bound, so nothing is missed).
/// That makes it cheap enough to re-check every clip after limiting, where a full oversampling
/// meter would dominate render time.
///
/// ```swift
/// let dBTP = TruePeak.estimate(clip)   // ≥ sample peak
/// ```
public enum TruePeak {
    private static let halfWidth = 6

    /// Interpolation weights, phase-major: `taps` weights for each position `phase / factor` past a sample,
    /// tap `t` applying to the sample `t - (halfWidth - 1)` away.
    private static func kernel(factor: Int) -> [Float] {
        (0..<factor).flatMap { phase in
            let offset = Double(phase) / Double(factor)
            return (-(halfWidth - 1)...halfWidth).map { tap in
                let distance = Double(tap) - offset
                let sinc = distance == 0 ? 1 : sin(.pi * distance) / (.pi * distance)
                let window = 0.5 * (1 + cos(.pi * distance / Double(halfWidth)))
                return Float(sinc * window)
            }
        }
    }

    private static let taps = 2 * halfWidth
    private static let kernel4 = kernel(factor: 4)
    private static let kernel2 = kernel(factor: 2)

    /// The largest gain of any interpolation phase on a full-scale input of the worst sign pattern
    /// (`Σ |weight|`): an interpolated value never exceeds this times the largest sample under its taps.
    private static func bound(_ kernel: [Float]) -> Float {
        stride(from: 0, to: kernel.count, by: taps).map { kernel[$0..<$0 + taps].reduce(0) { $0 + abs($1) } }.max()! * 1.0001
    }

    private static let bound4 = bound(kernel4)
    private static let bound2 = bound(kernel2)

    /// The highest true peak over all channels, dBTP (−∞ for silence).
    public static func estimate(_ buffer: AudioBuffer) -> Double {
        let channels = buffer.format.channels
        let frames = buffer.frameCount
        let samplePeak = buffer.peak
        guard samplePeak > 0 else { return -.infinity }
        let factor = buffer.format.sampleRate >= 96_000 ? 2 : 4
        let bound = factor == 4 ? bound4 : bound2
        var highest = samplePeak
        // One channel at a time, copied into a run padded with silence (taps outside the clip count as
        // silence); then eight intervals at once, skipping every block whose samples under the taps are too
        // quiet for any interpolation between them to exceed the highest value found so far.
        let padding = 16
        let padded = UnsafeMutableBufferPointer<Float>.allocate(capacity: frames + 2 * padding)
        defer { padded.deallocate() }
        padded.initialize(repeating: 0)
        buffer.samples.withUnsafeBufferPointer { samples in
            (factor == 4 ? kernel4 : kernel2).withUnsafeBufferPointer { weights in
                guard let source = samples.baseAddress, let kernel = weights.baseAddress, let run = padded.baseAddress else { return }
                let origin = run + padding
                for channel in 0..<channels {
                    for frame in 0..<frames { origin[frame] = source[frame &* channels &+ channel] }
                    // Intervals [n, n + 1] for n in 0 ..< frames − 1; block `start` covers n = start ..< start + 8,
                    // whose taps read samples start − 5 ... start + 13.
                    var start = 0
                    var skipBelow = highest / bound
                    while start < frames - 1 {
                        let firstTap = origin + start - (halfWidth - 1)
                        let loudest = SIMD8(loading: firstTap).magnitudes.larger(SIMD8(loading: firstTap, offset: 8).magnitudes)
                            .larger(SIMD8(loading: firstTap, offset: 11).magnitudes)
                        if loudest.largest > skipBelow {
                            var block = SIMD8<Float>(repeating: 0)
                            // The phases side by side, so their sums are independent chains.
                            var phase = 1
                            while phase < factor {
                                let weights1 = kernel + phase * taps
                                if phase + 1 < factor {
                                    let weights2 = weights1 + taps
                                    var sum1 = SIMD8<Float>(repeating: 0), sum2 = sum1
                                    for tap in 0..<taps {
                                        let samples = SIMD8(loading: firstTap, offset: tap)
                                        sum1 += samples * weights1[tap]
                                        sum2 += samples * weights2[tap]
                                    }
                                    block = block.larger(sum1.magnitudes).larger(sum2.magnitudes)
                                    phase += 2
                                } else {
                                    var sum = SIMD8<Float>(repeating: 0)
                                    for tap in 0..<taps {
                                        sum += SIMD8(loading: firstTap, offset: tap) * weights1[tap]
                                    }
                                    block = block.larger(sum.magnitudes)
                                    phase += 1
                                }
                            }
                            if start + 8 > frames - 1 {   // lanes past the last interval
                                for lane in (frames - 1 - start)..<8 { block[lane] = 0 }
                            }
                            let blockPeak = block.largest
                            if blockPeak > highest {
                                highest = blockPeak
                                skipBelow = highest / bound
                            }
                        }
                        start += 8
                    }
                }
            }
        }
        return 20 * log10(Double(highest))
    }
}
