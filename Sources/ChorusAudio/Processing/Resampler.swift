import CFFmpeg

/// Converts PCM between rates, channel layouts and sample formats with libswresample,
/// always producing interleaved Float32 in `output`.
///
/// Nothing is lost or duplicated: the resampler's internal delay is drained by `flush(into:)`,
/// so `n` input frames become `round(n × outRate / inRate)` output frames (±1).
/// Stereo → mono is `(L + R) / 2`; mono → stereo copies the channel.
///
/// ```swift
/// let resampler = try Resampler(from: AudioFormat(sampleRate: 16_000, channels: 2), to: .speech)
/// var out: [Float] = []
/// try input.samples.withUnsafeBufferPointer { try resampler.convert($0, into: &out) }
/// try resampler.flush(into: &out)
/// ```
public final class Resampler {
    /// The format every call appends.
    public let output: AudioFormat
    let inputRate: Int
    let inputChannels: Int
    let inputSampleFormat: AVSampleFormat
    private var context: OpaquePointer?
    private let subject: String

    /// A resampler for interleaved Float32 input in `input` format.
    public convenience init(from input: AudioFormat, to output: AudioFormat) throws {
        var layout = FFmpeg.channelLayout(channels: input.channels)
        defer { av_channel_layout_uninit(&layout) }
        try self.init(layout: &layout, sampleFormat: AV_SAMPLE_FMT_FLT, sampleRate: input.sampleRate, output: output, subject: "resampler")
    }

    init(
        layout: UnsafeMutablePointer<AVChannelLayout>, sampleFormat: AVSampleFormat, sampleRate: Int,
        output: AudioFormat, subject: String
    ) throws {
        guard sampleRate > 0, output.sampleRate > 0, output.channels > 0, layout.pointee.nb_channels > 0 else {
            throw AudioError(
                .invalidArgument, subject: subject,
                reason: "cannot resample \(sampleRate) Hz \(layout.pointee.nb_channels) ch to \(output)")
        }
        self.output = output
        self.subject = subject
        inputRate = sampleRate
        inputChannels = Int(layout.pointee.nb_channels)
        inputSampleFormat = sampleFormat
        var outputLayout = FFmpeg.channelLayout(channels: output.channels)
        defer { av_channel_layout_uninit(&outputLayout) }
        try FFmpeg.check(
            swr_alloc_set_opts2(
                &context, &outputLayout, AV_SAMPLE_FMT_FLT, Int32(output.sampleRate),
                layout, sampleFormat, Int32(sampleRate), 0, nil),
            "swr_alloc_set_opts2", subject: subject, reason: "cannot set up the resampler", as: .unsupportedFormat)
        do {
            try configureMatrix(inputChannels: inputChannels, outputChannels: output.channels)
            try FFmpeg.check(swr_init(context), "swr_init", subject: subject, reason: "cannot set up the resampler", as: .unsupportedFormat)
        } catch {
            swr_free(&context)
            throw error
        }
    }

    deinit { swr_free(&context) }

    /// Mono ↔ stereo get exact matrices; other layouts use libswresample's, normalised to avoid clipping.
    private func configureMatrix(inputChannels: Int, outputChannels: Int) throws {
        if inputChannels == 2 && outputChannels == 1 {
            let matrix: [Double] = [0.5, 0.5]
            try FFmpeg.check(swr_set_matrix(context, matrix, 2), "swr_set_matrix", subject: subject)
        } else if inputChannels == 1 && outputChannels == 2 {
            let matrix: [Double] = [1, 1]
            try FFmpeg.check(swr_set_matrix(context, matrix, 1), "swr_set_matrix", subject: subject)
        } else if inputChannels != outputChannels {
            try FFmpeg.check(
                av_opt_set_double(UnsafeMutableRawPointer(context), "rematrix_maxval", 1.0, 0), "av_opt_set_double",
                subject: subject)
        }
    }

    /// Converts interleaved Float32 frames (in the `from` format) and appends the result.
    public func convert(_ samples: UnsafeBufferPointer<Float>, into out: inout [Float]) throws {
        precondition(inputSampleFormat == AV_SAMPLE_FMT_FLT, "this resampler takes \(inputSampleFormat) input")
        guard let base = samples.baseAddress, !samples.isEmpty else { return }
        var plane: UnsafePointer<UInt8>? = UnsafeRawPointer(base).assumingMemoryBound(to: UInt8.self)
        _ = try withUnsafeMutablePointer(to: &plane) { planes in
            try run(planes, frames: samples.count / inputChannels, into: &out)
        }
    }

    /// Converts a decoded frame and appends the result.
    func convert(_ frame: UnsafeMutablePointer<AVFrame>, into out: inout [Float]) throws {
        let planes = UnsafeMutableRawPointer(frame.pointee.extended_data!)
            .assumingMemoryBound(to: UnsafePointer<UInt8>?.self)
        _ = try run(planes, frames: Int(frame.pointee.nb_samples), into: &out)
    }

    /// Drains the frames still inside the resampler's filter; call once after the last input.
    public func flush(into out: inout [Float]) throws {
        while try run(nil, frames: 0, into: &out) > 0 {}
    }

    @discardableResult
    private func run(_ planes: UnsafeMutablePointer<UnsafePointer<UInt8>?>?, frames: Int, into out: inout [Float]) throws -> Int {
        let capacity = Int(swr_get_out_samples(context, Int32(frames))) + 16
        let channels = output.channels
        let start = out.count
        out.append(contentsOf: repeatElement(0, count: capacity * channels))
        let produced = out.withUnsafeMutableBufferPointer { buffer -> Int32 in
            var destination: UnsafeMutablePointer<UInt8>? = UnsafeMutableRawPointer(buffer.baseAddress! + start)
                .assumingMemoryBound(to: UInt8.self)
            return withUnsafeMutablePointer(to: &destination) { destinationPlanes in
                swr_convert(context, destinationPlanes, Int32(capacity), planes, Int32(frames))
            }
        }
        guard produced >= 0 else {
            out.removeLast(capacity * channels)
            try FFmpeg.check(produced, "swr_convert", subject: subject, reason: "resampling failed")
            return 0
        }
        out.removeLast((capacity - Int(produced)) * channels)
        return Int(produced)
    }
}
