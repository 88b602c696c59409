/// A block of interleaved Float32 PCM and the format it is in.
///
/// ```swift
/// let buffer = AudioBuffer(format: .speech, samples: [Float](repeating: 0, count: 44_100))
/// buffer.frameCount   // 44_100
/// buffer.duration     // 1.0
/// ```
public struct AudioBuffer: Sendable {
    /// Sample rate and channel count of `samples`.
    public var format: AudioFormat
    /// Interleaved samples: `frameCount × format.channels` values.
    public var samples: [Float]

    /// Creates a buffer; `samples.count` must be a multiple of `format.channels`.
    public init(format: AudioFormat, samples: [Float] = []) {
        precondition(format.channels > 0 && samples.count % format.channels == 0, "samples must hold whole frames")
        self.format = format
        self.samples = samples
    }

    /// Number of frames (samples per channel).
    public var frameCount: Int { samples.count / format.channels }

    /// Length in seconds.
    public var duration: Double { format.seconds(frames: frameCount) }

    /// The largest absolute sample value.
    public var peak: Float {
        samples.withUnsafeBufferPointer { Self.peak(of: $0) }
    }

    static func peak(of samples: UnsafeBufferPointer<Float>) -> Float {
        var high: Float = 0
        var low: Float = 0
        for value in samples {
            high = Swift.max(high, value)
            low = Swift.min(low, value)
        }
        return Swift.max(high, -low)
    }

    /// A copy holding only the frames in `range`.
    public func frames(_ range: Range<Int>) -> AudioBuffer {
        let channels = format.channels
        return AudioBuffer(format: format, samples: Array(samples[(range.lowerBound * channels)..<(range.upperBound * channels)]))
    }
}
