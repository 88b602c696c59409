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
        var low = minimum
        var high = maximum
        var counted = count
        for frame in 0..<frames {
            var value: Int32
            if channels == 1 {
                value = Int32(samples[frame])
            } else {
                var sum: Int32 = 0
                for channel in 0..<channels { sum += Int32(samples[frame * channels + channel]) }
                value = sum / Int32(channels)
            }
            if value < low { low = value }
            if value > high { high = value }
            counted += 1
            if counted == samplesPerPixel {
                emit(low, high)
                low = Int32(Int16.max)
                high = Int32(Int16.min)
                counted = 0
            }
        }
        minimum = low
        maximum = high
        count = counted
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
        let reader = try AudioFileReader(url: url)
        let generator = try WaveformGenerator(sampleRate: reader.outputFormat.sampleRate,
                                              channels: reader.outputFormat.channels, zoom: zoom)
        var pcm16: [Int16] = []
        try reader.readToEnd { block in
            PCM16.quantize(block, into: &pcm16)
            pcm16.withUnsafeBufferPointer { generator.process($0) }
        }
        return generator.finish()
    }
}
