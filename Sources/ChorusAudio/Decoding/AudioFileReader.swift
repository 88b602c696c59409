import CFFmpeg
import ChorusSupport
public import Foundation

/// Reads any audio file or in-memory clip FFmpeg can decode (MP3, AAC/M4A/ADTS, WAV, AIFF, FLAC,
/// Opus/Vorbis in Ogg, …) as interleaved Float32 in the format you ask for.
///
/// The container is recognised from content, never from the extension. Encoder delay and padding
/// are removed, so the frame count is exact. End of stream is `nil`; damaged input throws an
/// `AudioError` naming the file.
///
/// ```swift
/// let reader = try AudioFileReader(url: URL(fileURLWithPath: "clip.m4a"), outputFormat: .speech)
/// let clip = try reader.readAll()          // 44.1 kHz mono Float32
/// print(reader.info.codec, clip.duration)
/// ```
public final class AudioFileReader {
    /// What the container declares about the stream.
    public var info: AudioStreamInfo { decoder.info }
    /// The format of every sample this reader returns.
    public let outputFormat: AudioFormat
    /// Frames returned so far, in `outputFormat`.
    public private(set) var framesRead = 0
    /// Time spent decoding and resampling so far.
    public private(set) var timings = StageTimings()
    /// Frames decoded so far at the source's own rate (before resampling).
    public private(set) var sourceFramesDecoded = 0

    private let decoder: MediaDecoder
    private var resampler: Resampler?
    private var finished = false
    let subject: String

    /// Opens a file.
    /// - Parameters:
    ///   - url: the file to read; its extension is ignored.
    ///   - outputFormat: the format to convert to; `nil` keeps the source's rate and channels.
    /// - Throws: `AudioError` (`fileNotFound`, `emptyAudio`, `unsupportedFormat`, `corrupt`, …) naming the path.
    public convenience init(url: URL, outputFormat: AudioFormat? = nil) throws {
        try self.init(input: MediaInput(url: url), subject: url.path, outputFormat: outputFormat)
    }

    /// Reads encoded audio already in memory (a provider response, a cached clip).
    /// - Parameters:
    ///   - data: the encoded bytes.
    ///   - name: how errors refer to this clip.
    ///   - outputFormat: the format to convert to; `nil` keeps the source's rate and channels.
    public convenience init(data: Data, name: String, outputFormat: AudioFormat? = nil) throws {
        try self.init(input: MediaInput(data: data, name: name), subject: name, outputFormat: outputFormat)
    }

    init(input: MediaInput, subject: String, outputFormat: AudioFormat?) throws {
        self.subject = subject
        decoder = try MediaDecoder(input: input, subject: subject)
        self.outputFormat = outputFormat ?? AudioFormat(sampleRate: decoder.info.sampleRate, channels: decoder.info.channels)
        guard self.outputFormat.sampleRate > 0, self.outputFormat.channels > 0 else {
            throw AudioError(.invalidArgument, subject: subject, reason: "cannot decode to \(self.outputFormat)")
        }
    }

    /// The next block of samples, or `nil` at end of stream.
    public func read() throws -> [Float]? {
        var block: [Float] = []
        return try read(appendingTo: &block) ? block : nil
    }

    /// Decodes everything that is left.
    /// - Throws: `AudioError.emptyAudio` when the stream holds no samples at all; `truncated` / `corrupt`
    ///   as `readToEnd` judges.
    public func readAll() throws -> AudioBuffer {
        var samples: [Float] = []
        // A header's length is only a hint: reserve for at most 10 minutes and 64 MB, so a lying header
        // cannot make a short clip allocate gigabytes (longer audio grows the array as it comes).
        if let duration = info.declaredDuration, duration.isFinite, duration > 0 {
            samples.reserveCapacity(min(outputFormat.frames(seconds: min(duration, 600)) * outputFormat.channels + 8192, 16 << 20))
        }
        try readToEnd { samples.append(contentsOf: $0) }
        return AudioBuffer(format: outputFormat, samples: samples)
    }

    /// The one "decode to the end and judge it" routine, shared by rendering, probing and waveforms:
    /// hands every decoded block to `body`, then checks the whole stream (nothing decoded, truncated
    /// against its header, too many undecodable frames) and throws if it fails.
    /// - Returns: the frames delivered, in `outputFormat`.
    @discardableResult
    public func readToEnd(_ body: (UnsafeBufferPointer<Float>) throws -> Void) throws -> Int {
        try readToEnd(body) { _ in false }
    }

    /// `readToEnd` for 16-bit consumers (waveform peaks), every sample through `PCM16.quantize`: the same values
    /// as `readToEnd`'s quantized, but frames the decoder already gives as 16-bit or interleaved float at the
    /// output's rate and channels skip the resampler (no float round trip for 16-bit WAV, no conversion pass
    /// for mono MP3).
    /// - Returns: the frames delivered, in `outputFormat`.
    @discardableResult
    public func readToEnd16(_ body: (UnsafeBufferPointer<Int16>) throws -> Void) throws -> Int {
        var pcm16: [Int16] = []
        func quantized(_ floats: UnsafeBufferPointer<Float>) throws {
            PCM16.quantize(floats, into: &pcm16)
            try pcm16.withUnsafeBufferPointer(body)
        }
        let output = outputFormat
        return try readToEnd(quantized) { frame in
            let frames = Int(frame.pointee.nb_samples)
            let channels = Int(frame.pointee.ch_layout.nb_channels)
            let format = AVSampleFormat(frame.pointee.format)
            let count = frames * channels
            guard Int(frame.pointee.sample_rate) == output.sampleRate, channels == output.channels,
                let data = frame.pointee.data.0
            else { return false }
            switch format {
            // Interleaved samples, or planar ones of one channel (the same layout).
            case _ where format == AV_SAMPLE_FMT_S16 || (format == AV_SAMPLE_FMT_S16P && channels == 1):
                try data.withMemoryRebound(to: Int16.self, capacity: count) { try body(UnsafeBufferPointer(start: $0, count: count)) }
            case _ where format == AV_SAMPLE_FMT_FLT || (format == AV_SAMPLE_FMT_FLTP && channels == 1):
                try data.withMemoryRebound(to: Float.self, capacity: count) { try quantized(UnsafeBufferPointer(start: $0, count: count)) }
            default:
                return false
            }
            return true
        }
    }

    /// Takes a decoded frame as it is and returns true, or returns false to have it resampled.
    private typealias FrameSink = (UnsafeMutablePointer<AVFrame>) throws -> Bool

    private func readToEnd(_ body: (UnsafeBufferPointer<Float>) throws -> Void, passing direct: FrameSink) throws -> Int {
        var block: [Float] = []
        let start = framesRead
        while try read(appendingTo: &block, passing: direct) {
            if !block.isEmpty { try block.withUnsafeBufferPointer(body) }
            block.removeAll(keepingCapacity: true)
        }
        let total = framesRead - start
        if total == 0 {
            throw AudioError(.emptyAudio, subject: subject, reason: "contains no audio samples")
        }
        return total
    }

    /// Appends the next decoded block to `samples`, or hands a frame to `direct` (which may take frames only
    /// while no resampler is running, so order holds); returns `false` (doing neither) at end of stream.
    private func read(appendingTo samples: inout [Float], passing direct: FrameSink = { _ in false }) throws -> Bool {
        guard !finished else { return false }
        let before = samples.count
        var passed = 0
        while samples.count == before && passed == 0 {
            // Per packet, the cheap monotonic clock: a thread-CPU clock read is a ~350 ns system call, ~10 % of
            // decoding a packet. (Coarser stages are timed on the thread's CPU clock: `StageTimings.measure`.)
            let decodeStart = MonotonicClock.now
            let frame = try decoder.nextFrame()
            timings.add(.decode, MonotonicClock.now - decodeStart)
            guard let frame else {
                if let resampler {
                    try timings.measure(.resample) { try resampler.flush(into: &samples) }
                }
                finished = true
                try checkCompleteness()
                framesRead += (samples.count - before) / outputFormat.channels
                return samples.count > before
            }
            sourceFramesDecoded += Int(frame.pointee.nb_samples)
            if resampler == nil, try direct(frame) {
                passed = Int(frame.pointee.nb_samples)
                continue
            }
            let converter = try resampler(for: frame, flushingInto: &samples)
            let resampleStart = MonotonicClock.now
            try converter.convert(frame, into: &samples)
            timings.add(.resample, MonotonicClock.now - resampleStart)
        }
        framesRead += (samples.count - before) / outputFormat.channels + passed
        return true
    }

    /// The resampler for this frame's format, rebuilt (after draining the old one) when the stream changes format.
    private func resampler(for frame: UnsafeMutablePointer<AVFrame>, flushingInto samples: inout [Float]) throws -> Resampler {
        let rate = Int(frame.pointee.sample_rate)
        let channels = Int(frame.pointee.ch_layout.nb_channels)
        let format = AVSampleFormat(frame.pointee.format)
        if let resampler, resampler.inputRate == rate, resampler.inputChannels == channels, resampler.inputSampleFormat == format {
            return resampler
        }
        if let old = resampler { try old.flush(into: &samples) }
        let made = try withUnsafeMutablePointer(to: &frame.pointee.ch_layout) { layout in
            try Resampler(layout: layout, sampleFormat: format, sampleRate: rate, output: outputFormat, subject: subject)
        }
        resampler = made
        return made
    }

    private func checkCompleteness() throws {
        if sourceFramesDecoded == 0 {
            if decoder.undecodablePackets > 0 {
                throw AudioError(
                    .corrupt, subject: subject,
                    reason: "none of its \(decoder.packetsSent) \(info.codec) frames could be decoded",
                    underlying: decoder.firstDecodeErrorMessage)
            }
            throw AudioError(.emptyAudio, subject: subject, reason: "contains no audio samples")
        }
        let sourceFormat = AudioFormat(sampleRate: max(info.sampleRate, 1), channels: info.channels)
        let decodedSeconds = sourceFormat.seconds(frames: sourceFramesDecoded)
        // Declared lengths may include encoder delay and padding (MP3 Xing frame counts do): allow
        // four MP3 frames of those, plus 2 %.
        let slack = sourceFormat.seconds(frames: 4 * 1_152)
        if decoder.declaredDurationIsExact, let declared = info.declaredDuration,
            decodedSeconds < declared * 0.98 - slack
        {
            throw AudioError(
                .truncated, subject: subject,
                reason: String(
                    format: "truncated: the header declares %.2f s of audio but the data ends after %.2f s",
                    declared, decodedSeconds),
                underlying: decoder.readError)
        }
        if decoder.undecodablePackets > max(2, decoder.packetsSent / 10) {
            throw AudioError(
                .corrupt, subject: subject,
                reason: "\(decoder.undecodablePackets) of \(decoder.packetsSent) audio frames could not be decoded",
                underlying: decoder.firstDecodeErrorMessage)
        }
    }
}
