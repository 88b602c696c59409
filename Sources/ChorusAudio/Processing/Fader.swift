import Foundation

/// Raised-cosine fades at a clip's edges, so joins with silence never click.
///
/// ```swift
/// Fader(milliseconds: 5).apply(to: &clip)
/// ```
public struct Fader: Sendable {
    /// Fade length at each edge, in milliseconds (at most 10; shorter clips fade over half their length).
    public var milliseconds: Int

    public init(milliseconds: Int = 5) {
        self.milliseconds = min(10, max(0, milliseconds))
    }

    /// Fades the first and last `milliseconds` of `buffer` in place.
    public func apply(to buffer: inout AudioBuffer) {
        let channels = buffer.format.channels
        let frames = buffer.frameCount
        let length = min(buffer.format.frames(milliseconds: milliseconds), frames / 2)
        guard length > 0 else { return }
        buffer.samples.withUnsafeMutableBufferPointer { samples in
            for index in 0..<length {
                let gain = Float(0.5 - 0.5 * cos(Double.pi * (Double(index) + 0.5) / Double(length)))
                for channel in 0..<channels {
                    samples[index * channels + channel] *= gain
                    samples[(frames - 1 - index) * channels + channel] *= gain
                }
            }
        }
    }
}
