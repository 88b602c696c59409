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
        guard let base = samples.baseAddress else { return 0 }
        // Four times eight lanes at a time, in independent chains (`Swift.max` on floats stays a scalar
        // compare-and-select chain).
        var lanes0 = SIMD8<Float>(repeating: 0)
        var lanes1 = lanes0
        var lanes2 = lanes0
        var lanes3 = lanes0
        var index = 0
        while index + 32 <= samples.count {
            lanes0 = lanes0.larger(SIMD8(loading: base, offset: index).magnitudes)
            lanes1 = lanes1.larger(SIMD8(loading: base, offset: index + 8).magnitudes)
            lanes2 = lanes2.larger(SIMD8(loading: base, offset: index + 16).magnitudes)
            lanes3 = lanes3.larger(SIMD8(loading: base, offset: index + 24).magnitudes)
            index += 32
        }
        var highest = lanes0.larger(lanes1).larger(lanes2.larger(lanes3)).largest
        while index < samples.count {
            highest = Swift.max(highest, abs(base[index]))
            index += 1
        }
        return highest
    }

    /// A copy holding only the frames in `range`.
    public func frames(_ range: Range<Int>) -> AudioBuffer {
        let channels = format.channels
        return AudioBuffer(format: format, samples: Array(samples[(range.lowerBound * channels)..<(range.upperBound * channels)]))
    }
}
