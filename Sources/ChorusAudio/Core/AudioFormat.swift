/// The shape of PCM audio inside Chorus: a sample rate and a channel count.
///
/// Samples are always 32-bit float, interleaved, nominally within −1…1. All frame/time
/// arithmetic lives here: count in frames (integers), derive seconds.
///
/// ```swift
/// let format = AudioFormat(sampleRate: 44_100, channels: 1)
/// format.frames(milliseconds: 300)   // 13_230
/// format.seconds(frames: 13_230)     // 0.3
/// ```
public struct AudioFormat: Sendable, Hashable, CustomStringConvertible {
    /// Frames per second.
    public var sampleRate: Int
    /// Interleaved channels per frame.
    public var channels: Int

    /// Creates a format.
    /// - Parameters:
    ///   - sampleRate: frames per second.
    ///   - channels: channels per frame (1 = mono, 2 = stereo).
    public init(sampleRate: Int, channels: Int) {
        self.sampleRate = sampleRate
        self.channels = channels
    }

    /// 44.1 kHz mono: the default output of a conversation render.
    public static let speech = AudioFormat(sampleRate: 44_100, channels: 1)

    /// `round(milliseconds / 1000 × sampleRate)`, rounding halves away from zero.
    public func frames(milliseconds: Int) -> Int {
        let product = milliseconds * sampleRate
        return product >= 0 ? (product + 500) / 1000 : -((-product + 500) / 1000)
    }

    /// `round(seconds × sampleRate)`.
    public func frames(seconds: Double) -> Int {
        Int((seconds * Double(sampleRate)).rounded())
    }

    /// The time at a frame offset, in seconds.
    public func seconds(frames: Int) -> Double {
        Double(frames) / Double(sampleRate)
    }

    /// The time at a frame offset, rounded to the microsecond: how timelines and manifests print times.
    public func roundedSeconds(frames: Int) -> Double {
        Self.roundedToMicroseconds(seconds(frames: frames))
    }

    /// `seconds` rounded to the microsecond.
    public static func roundedToMicroseconds(_ seconds: Double) -> Double {
        (seconds * 1_000_000).rounded() / 1_000_000
    }

    public var description: String {
        let layout: String
        switch channels {
        case 1: layout = "mono"
        case 2: layout = "stereo"
        default: layout = "\(channels) channels"
        }
        return "\(sampleRate) Hz \(layout)"
    }
}
