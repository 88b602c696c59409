import Foundation

/// A fast true-peak (inter-sample peak) estimate, in the spirit of ITU-R BS.1770 Annex 2:
/// the signal is interpolated 4× (2× at 96 kHz and above) with a 12-tap Hann-windowed sinc,
/// but only around samples within 6 dB of the clip's sample peak, the only places an
/// inter-sample peak can rise above it in practice. That makes it cheap enough to re-check
/// every clip after limiting, where a full oversampling meter would dominate render time.
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

    /// The highest true peak over all channels, dBTP (−∞ for silence).
    public static func estimate(_ buffer: AudioBuffer) -> Double {
        let channels = buffer.format.channels
        let frames = buffer.frameCount
        let samplePeak = buffer.peak
        guard samplePeak > 0 else { return -.infinity }
        let factor = buffer.format.sampleRate >= 96_000 ? 2 : 4
        let threshold = samplePeak * 0.5
        var highest = samplePeak
        buffer.samples.withUnsafeBufferPointer { samples in
            (factor == 4 ? kernel4 : kernel2).withUnsafeBufferPointer { weights in
                guard let base = samples.baseAddress, let kernel = weights.baseAddress else { return }
                for channel in 0..<channels {
                    var lastInterval = -1
                    for frame in 0..<frames where abs(base[frame &* channels &+ channel]) >= threshold {
                        // The intervals on both sides of a loud sample: [frame-1, frame] and [frame, frame+1].
                        let first = max(frame - 1, lastInterval + 1, 0)
                        let last = min(frame, frames - 2)
                        guard first <= last else { continue }
                        for start in first...last {
                            let firstTap = start - (halfWidth - 1)
                            let interior = firstTap >= 0 && start + halfWidth < frames
                            for phase in 1..<factor {
                                let phaseWeights = kernel + phase * taps
                                var sum: Float = 0
                                if interior {
                                    let origin = base + firstTap * channels + channel
                                    for tap in 0..<taps { sum += origin[tap &* channels] * phaseWeights[tap] }
                                } else {
                                    // Near the ends: taps outside the clip count as silence.
                                    for tap in 0..<taps where firstTap + tap >= 0 && firstTap + tap < frames {
                                        sum += base[(firstTap + tap) * channels + channel] * phaseWeights[tap]
                                    }
                                }
                                highest = max(highest, abs(sum))
                            }
                            lastInterval = start
                        }
                    }
                }
            }
        }
        return 20 * log10(Double(highest))
    }
}
