import Foundation

/// A look-ahead peak limiter: keeps every sample at or below `ceiling` with a gain that ramps down
/// over the look-ahead window before a peak and recovers with an exponential release after it.
///
/// Channels are linked (one gain per frame), so the stereo image does not shift.
///
/// ```swift
/// var limiter = PeakLimiter(format: clip.format, ceiling: 0.84)
/// clip.samples.withUnsafeMutableBufferPointer { limiter.process($0) }
/// ```
public struct PeakLimiter: Sendable {
    public var format: AudioFormat
    /// Linear sample ceiling (e.g. 0.84 ≈ −1.5 dBFS).
    public var ceiling: Float
    /// Look-ahead (and attack) in milliseconds.
    public var lookAheadMilliseconds: Int
    /// Release time constant in milliseconds.
    public var releaseMilliseconds: Int

    public init(format: AudioFormat, ceiling: Float, lookAheadMilliseconds: Int = 5, releaseMilliseconds: Int = 40) {
        self.format = format
        self.ceiling = ceiling
        self.lookAheadMilliseconds = lookAheadMilliseconds
        self.releaseMilliseconds = releaseMilliseconds
    }

    /// Limits interleaved samples in place. Returns the deepest gain reduction applied, in dB (≤ 0).
    @discardableResult
    public func process(_ samples: UnsafeMutableBufferPointer<Float>) -> Double {
        let channels = format.channels
        let frames = samples.count / channels
        guard frames > 0 else { return 0 }
        let window = max(1, format.frames(milliseconds: lookAheadMilliseconds))

        // Gain each frame needs on its own.
        let needed = UnsafeMutableBufferPointer<Float>.allocate(capacity: frames)
        defer { needed.deallocate() }
        var anyOver = false
        for frame in 0..<frames {
            var peak: Float = 0
            for channel in 0..<channels { peak = max(peak, abs(samples[frame &* channels &+ channel])) }
            if peak > ceiling {
                needed[frame] = ceiling / peak
                anyOver = true
            } else {
                needed[frame] = 1
            }
        }
        guard anyOver else { return 0 }

        // `ahead[n]`: the minimum of `needed` over frames n ..< n + window (a monotonic queue in a ring),
        // so the gain is already down when the peak arrives.
        let ahead = UnsafeMutableBufferPointer<Float>.allocate(capacity: frames)
        defer { ahead.deallocate() }
        let ringSize = window + 1
        let ring = UnsafeMutableBufferPointer<Int>.allocate(capacity: ringSize)
        defer { ring.deallocate() }
        var head = 0
        var count = 0
        var next = 0
        // Ring positions wrap by one comparison, not `%` (an integer division per step was most of this loop).
        @inline(__always) func wrapped(_ position: Int) -> Int { position >= ringSize ? position - ringSize : position }
        for frame in 0..<frames {
            let end = min(frames, frame + window)
            while next < end {
                let value = needed[next]
                while count > 0 && needed[ring[wrapped(head + count - 1)]] >= value { count -= 1 }
                ring[wrapped(head + count)] = next
                count += 1
                next += 1
            }
            while ring[head] < frame {
                head = wrapped(head + 1)
                count -= 1
            }
            ahead[frame] = needed[ring[head]]
        }

        // A moving average of `ahead` over the same window gives a smooth attack that never exceeds
        // the needed gain (every window averaged for frame n contains n); then an exponential release.
        let release = Float(exp(-1.0 / (Double(format.sampleRate) * Double(releaseMilliseconds) / 1000)))
        let history = UnsafeMutableBufferPointer<Float>.allocate(capacity: window)
        defer { history.deallocate() }
        history.initialize(repeating: 1)
        var sum = Double(window)
        var envelope: Float = 1
        var deepest: Float = 1
        var slot = 0
        for frame in 0..<frames {
            sum += Double(ahead[frame] - history[slot])
            history[slot] = ahead[frame]
            slot = slot + 1 == window ? 0 : slot + 1
            let attack = Float(sum / Double(window))
            envelope = min(attack, 1 - (1 - envelope) * release, needed[frame])
            deepest = min(deepest, envelope)
            if envelope < 1 {
                for channel in 0..<channels { samples[frame &* channels &+ channel] *= envelope }
            }
        }
        return 20 * log10(Double(deepest))
    }
}
