import Foundation

/// A fast true-peak (inter-sample peak) estimate, in the spirit of ITU-R BS.1770 Annex 2:
/// the signal is interpolated 4× (2× at 96 kHz and above) with a 12-tap Hann-windowed sinc,
/// eight intervals at once, and only where the samples under the taps could give an interpolated
/// value above the highest found so far (a strict bound, so nothing is missed; see `exceeds`).
/// That makes it cheap enough to re-check every clip after limiting, where a full oversampling
/// meter would dominate render time.
///
/// ```swift
/// let dBTP = TruePeak.estimate(clip)   // ≥ sample peak
/// ```
public enum TruePeak {
    private static let halfWidth = 6

    /// The Hann-windowed sinc at `distance` samples.
    private static func weight(_ distance: Double) -> Double {
        let sinc = distance == 0 ? 1 : sin(.pi * distance) / (.pi * distance)
        return sinc * 0.5 * (1 + cos(.pi * distance / Double(halfWidth)))
    }

    /// Interpolation weights, phase-major: `taps` weights for each position `phase / factor` past a sample,
    /// tap `t` applying to the sample `t - (halfWidth - 1)` away.
    private static func kernel(factor: Int) -> [Float] {
        (0..<factor).flatMap { phase in
            (-(halfWidth - 1)...halfWidth).map { tap in Float(weight(Double(tap) - Double(phase) / Double(factor))) }
        }
    }

    private static let taps = 2 * halfWidth
    private static let kernel4 = kernel(factor: 4)
    private static let kernel2 = kernel(factor: 2)

    /// The kernel folded on its symmetry, for the computation: the weights are even in the distance, so the phase
    /// ½ past a sample weighs taps `t` and `11 − t` alike (`middle`), and the phase ¾ is the phase ¼ mirrored. With
    /// `a = s[t] + s[11 − t]` and `d = s[t] − s[11 − t]` (t < 6), phase ¼ is `Σ even·a + Σ odd·d`, phase ¾ is
    /// `Σ even·a − Σ odd·d`, and the larger of their magnitudes is `|Σ even·a| + |Σ odd·d|`: 18 multiply-adds per
    /// interval for the three phases instead of 36.
    private static let middle: [Float] = (0..<halfWidth).map { Float(weight(Double($0 - (halfWidth - 1)) - 0.5)) }
    private static let even: [Float] = (0..<halfWidth).map {
        Float((weight(Double($0 - (halfWidth - 1)) - 0.25) + weight(Double(halfWidth - $0) - 0.25)) / 2)
    }
    private static let odd: [Float] = (0..<halfWidth).map {
        Float((weight(Double($0 - (halfWidth - 1)) - 0.25) - weight(Double(halfWidth - $0) - 0.25)) / 2)
    }

    /// The largest gain of any interpolation phase on a full-scale input of the worst sign pattern
    /// (`Σ |weight|`): an interpolated value never exceeds this times the largest sample under its taps.
    private static func bound(_ kernel: [Float]) -> Float {
        stride(from: 0, to: kernel.count, by: taps).map { kernel[$0..<$0 + taps].reduce(0) { $0 + abs($1) } }.max()! * 1.0001
    }

    private static let bound4 = bound(kernel4)
    private static let bound2 = bound(kernel2)

    /// The largest `|Σ weight|` of any interpolation phase (about 1: the interpolator passes a constant through).
    private static func dcGain(_ kernel: [Float]) -> Float {
        stride(from: taps, to: kernel.count, by: taps).map { abs(kernel[$0..<$0 + taps].reduce(0, +)) }.max()! * 1.0001
    }

    private static let dcGain4 = dcGain(kernel4)
    private static let dcGain2 = dcGain(kernel2)

    /// Whether an interpolated value over samples lying in `lowest ... highest` could exceed `limit`.
    ///
    /// With the samples written as `m + e` (m the middle of the range, |e| ≤ r its half-width), a phase's value
    /// `Σ w·(m + e)` is at most `|m|·|Σ w| + r·Σ |w|` = `|m|·dcGain + r·bound`. Samples near the top of a smooth
    /// stretch lie close together, so this is far tighter than `bound × the largest magnitude` (which it never
    /// exceeds): blocks of limited speech sitting a little under the ceiling are skipped, not computed.
    /// `exceeds` for the `samples` (≥ 8) samples from `first`, read four at a time (the last four overlapping).
    @inline(__always)
    private static func mayExceed(_ limit: Float, _ first: UnsafePointer<Float>, samples: Int, dcGain: Float, bound: Float) -> Bool {
        var top = SIMD4(loading: first)
        var bottom = top
        for offset in stride(from: 4, to: samples - 4, by: 4) {
            let next = SIMD4(loading: first, offset: offset)
            top = top.larger(next)
            bottom = bottom.smaller(next)
        }
        let end = SIMD4(loading: first, offset: samples - 4)
        top = top.larger(end)
        bottom = bottom.smaller(end)
        return exceeds(limit, lowest: bottom.smallest, highest: top.largest, dcGain: dcGain, bound: bound)
    }

    @inline(__always)
    private static func exceeds(_ limit: Float, lowest: Float, highest: Float, dcGain: Float, bound: Float) -> Bool {
        abs(highest + lowest) * 0.5 * dcGain + (highest - lowest) * 0.5 * bound > limit
    }

    /// The highest true peak over all channels, dBTP (−∞ for silence).
    public static func estimate(_ buffer: AudioBuffer) -> Double { estimate(buffer, skipQuiet: true) }

    /// `skipQuiet: false` computes every block (the tests' check that skipping never changes the result).
    static func estimate(_ buffer: AudioBuffer, skipQuiet: Bool) -> Double {
        let channels = buffer.format.channels
        let frames = buffer.frameCount
        let samplePeak = buffer.peak
        guard samplePeak > 0 else { return -.infinity }
        let factor = buffer.format.sampleRate >= 96_000 ? 2 : 4
        let bound = factor == 4 ? bound4 : bound2
        let dcGain = factor == 4 ? dcGain4 : dcGain2
        var highest = samplePeak
        // One channel at a time, copied into a run padded with silence (taps outside the clip count as
        // silence); then eight intervals at once, skipping every block whose samples under the taps are too
        // quiet for any interpolation between them to exceed the highest value found so far.
        let padding = 16
        let padded = UnsafeMutableBufferPointer<Float>.allocate(capacity: frames + 2 * padding)
        defer { padded.deallocate() }
        buffer.samples.withUnsafeBufferPointer { samples in
            Self.middle.withUnsafeBufferPointer { middles in
                Self.even.withUnsafeBufferPointer { evens in
                    Self.odd.withUnsafeBufferPointer { odds in
                        guard let source = samples.baseAddress, let run = padded.baseAddress else { return }
                        let origin = run + padding
                        // Only the padding needs zeros: the channel's samples fill the rest.
                        run.initialize(repeating: 0, count: padding)
                        (origin + frames).initialize(repeating: 0, count: padding)
                        for channel in 0..<channels {
                            if channels == 1 {
                                origin.update(from: source, count: frames)
                            } else {
                                for frame in 0..<frames { origin[frame] = source[frame &* channels &+ channel] }
                            }
                            // Intervals [n, n + 1] for n in 0 ..< frames − 1; block `start` covers n = start ..< start + 8,
                            // whose taps read samples start − 5 ... start + 13. Four blocks at a time are first checked
                            // together (samples start − 5 ... start + 37): nearly all of a clip is skipped there, with one
                            // pair of horizontal extremes per 32 intervals instead of per 8.
                            var start = 0
                            while start < frames - 1 {
                                let firstTap = origin + start - (halfWidth - 1)
                                if skipQuiet && start + 32 <= frames - 1
                                    && !mayExceed(highest, firstTap, samples: 43, dcGain: dcGain, bound: bound)
                                {
                                    start += 32
                                    continue
                                }
                                if !skipQuiet || mayExceed(highest, firstTap, samples: 19, dcGain: dcGain, bound: bound) {
                                    var folded = SIMD8<Float>(repeating: 0)
                                    var odd = folded
                                    var middle = folded
                                    for tap in 0..<halfWidth {
                                        let near = SIMD8(loading: firstTap, offset: tap)
                                        let far = SIMD8(loading: firstTap, offset: taps - 1 - tap)
                                        let sum = near + far
                                        middle += sum * middles[tap]
                                        if factor == 4 {
                                            folded += sum * evens[tap]
                                            odd += (near - far) * odds[tap]
                                        }
                                    }
                                    var block = middle.magnitudes
                                    if factor == 4 { block = block.larger(folded.magnitudes + odd.magnitudes) }
                                    if start + 8 > frames - 1 {  // lanes past the last interval
                                        for lane in (frames - 1 - start)..<8 { block[lane] = 0 }
                                    }
                                    let blockPeak = block.largest
                                    highest = max(highest, blockPeak)
                                }
                                start += 8
                            }
                        }
                    }
                }
            }
        }
        return 20 * log10(Double(highest))
    }
}
