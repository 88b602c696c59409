import Foundation

/// Finds where speech starts and ends in a clip, so gaps are measured speech to speech.
///
/// A frame is "sound" when any channel exceeds `thresholdDB` relative to the clip's own peak
/// (so quiet recordings and loud ones trim alike). At most `marginMilliseconds` of the quieter
/// audio is kept before the first and after the last sound, so soft onsets and word tails survive.
///
/// ```swift
/// let keep = SilenceTrimmer().soundRange(of: clip)   // frames to keep
/// let trimmed = clip.frames(keep)
/// ```
public struct SilenceTrimmer: Sendable, Encodable {
    /// Level below the clip's peak that counts as silence, in dB (default −40).
    public var thresholdDB: Double
    /// Margin kept around the sound, in milliseconds (default 25).
    public var marginMilliseconds: Int

    public init(thresholdDB: Double = -40, marginMilliseconds: Int = 25) {
        self.thresholdDB = thresholdDB
        self.marginMilliseconds = marginMilliseconds
    }

    /// The frames to keep; empty when the clip is digital silence.
    public func soundRange(of buffer: AudioBuffer) -> Range<Int> {
        let peak = buffer.peak
        guard peak > 0 else { return 0..<0 }
        let threshold = peak * Float(pow(10, thresholdDB / 20))
        let channels = buffer.format.channels
        let frames = buffer.frameCount
        let margin = buffer.format.frames(milliseconds: marginMilliseconds)
        return buffer.samples.withUnsafeBufferPointer { samples -> Range<Int> in
            var first = 0
            while first < frames && !Self.isSound(samples, frame: first, channels: channels, threshold: threshold) { first += 1 }
            var last = frames - 1
            while last > first && !Self.isSound(samples, frame: last, channels: channels, threshold: threshold) { last -= 1 }
            return max(0, first - margin)..<min(frames, last + 1 + margin)
        }
    }

    @inline(__always)
    private static func isSound(_ samples: UnsafeBufferPointer<Float>, frame: Int, channels: Int, threshold: Float) -> Bool {
        let base = frame * channels
        for channel in 0..<channels where abs(samples[base + channel]) > threshold { return true }
        return false
    }
}
