public import Foundation

/// Computes min/max peaks over every `samplesPerPixel` frames of 16-bit audio, exactly as BBC
/// audiowaveform does: channels are averaged with integer division (truncating toward zero), and
/// a final partial block is emitted too.
///
/// ```swift
/// let generator = try WaveformGenerator(sampleRate: 44_100, channels: 1, zoom: .samplesPerPixel(256))
/// generator.process(pcm16)
/// let peaks = generator.finish()
/// ```
public final class WaveformGenerator {
    public let samplesPerPixel: Int
    private let sampleRate: Int
    private let channels: Int
    private var minimum = Int32(Int16.max)
    private var maximum = Int32(Int16.min)
    private var count = 0
    private var data: [Int16] = []

    /// - Throws: `AudioError.invalidArgument` for a zoom under 2 samples per pixel.
    public init(sampleRate: Int, channels: Int, zoom: WaveformZoom) throws {
        guard channels >= 1 else {
            throw AudioError(.invalidArgument, subject: "waveform", reason: "needs at least one channel")
        }
        self.sampleRate = sampleRate
        self.channels = channels
        samplesPerPixel = try zoom.samplesPerPixel(sampleRate: sampleRate)
    }

    /// Adds interleaved 16-bit frames.
    public func process(_ samples: UnsafeBufferPointer<Int16>) {
        let frames = samples.count / channels
        guard frames > 0, let base = samples.baseAddress else { return }
        var frame = 0
        // Pixel by pixel: each span's minimum and maximum in a loop without branches, which the optimizer
        // turns into vector min/max instructions.
        while frame < frames {
            let take = min(frames - frame, samplesPerPixel - count)
            var low = minimum
            var high = maximum
            switch channels {
            case 1:
                var spanLow = Int16.max
                var spanHigh = Int16.min
                for index in frame..<frame + take {
                    spanLow = min(spanLow, base[index])
                    spanHigh = max(spanHigh, base[index])
                }
                low = min(low, Int32(spanLow))
                high = max(high, Int32(spanHigh))
            case 2:
                for index in frame..<frame + take {
                    let value = (Int32(base[2 &* index]) &+ Int32(base[2 &* index &+ 1])) / 2
                    low = min(low, value)
                    high = max(high, value)
                }
            default:
                for index in frame..<frame + take {
                    var sum: Int32 = 0
                    for channel in 0..<channels { sum &+= Int32(base[index &* channels &+ channel]) }
                    let value = sum / Int32(channels)
                    low = min(low, value)
                    high = max(high, value)
                }
            }
            minimum = low
            maximum = high
            count += take
            frame += take
            if count == samplesPerPixel {
                emit(minimum, maximum)
                minimum = Int32(Int16.max)
                maximum = Int32(Int16.min)
                count = 0
            }
        }
    }

    /// Appends one (min, max) point.
    @inline(__always)
    private func emit(_ low: Int32, _ high: Int32) {
        data.append(Int16(low))
        data.append(Int16(high))
    }

    /// Adds `frames` frames of digital silence.
    public func processSilence(frames: Int) {
        var remaining = frames
        while remaining > 0 {
            let step = min(remaining, samplesPerPixel - count)
            minimum = min(minimum, 0)
            maximum = max(maximum, 0)
            count += step
            remaining -= step
            if count == samplesPerPixel {
                emit(minimum, maximum)
                minimum = Int32(Int16.max)
                maximum = Int32(Int16.min)
                count = 0
            }
        }
    }

    /// Emits the final partial point and returns all peaks.
    public func finish() -> WaveformPeaks {
        if count > 0 {
            emit(minimum, maximum)
            count = 0
        }
        return WaveformPeaks(sampleRate: sampleRate, samplesPerPixel: samplesPerPixel, channels: 1, data: data)
    }
}

extension WaveformPeaks {
    /// Peaks of any audio file FFmpeg decodes, at its own sample rate, channels averaged.
    /// - Throws: `AudioError` naming the file.
    public static func compute(fileAt url: URL, zoom: WaveformZoom) throws -> WaveformPeaks {
        try compute(AudioFileReader(url: url), zoom: zoom)
    }

    /// The same for encoded audio held in memory (`name` labels it in errors).
    public static func compute(data: Data, name: String, zoom: WaveformZoom) throws -> WaveformPeaks {
        try compute(AudioFileReader(data: data, name: name), zoom: zoom)
    }

    private static func compute(_ reader: AudioFileReader, zoom: WaveformZoom) throws -> WaveformPeaks {
        let generator = try WaveformGenerator(
            sampleRate: reader.outputFormat.sampleRate,
            channels: reader.outputFormat.channels, zoom: zoom)
        try reader.readToEnd16 { generator.process($0) }
        return generator.finish()
    }
}
