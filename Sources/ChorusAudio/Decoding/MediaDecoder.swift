import CFFmpeg

/// Demuxes and decodes the best audio stream of a `MediaInput` into `AVFrame`s.
///
/// One owner of the format and codec contexts, packet and frame (`deinit` frees them).
/// `nextFrame()` returns `nil` at end of stream; real failures throw. Encoder delay and padding
/// (LAME/Xing tag, MP4 edit lists, Opus pre-skip) are dropped by libavformat/libavcodec here.
final class MediaDecoder {
    /// Source sample rates and channel counts a stream may declare (the input's rule; outputs have
    /// `RenderOptions.sampleRateRange` / `channelRange`).
    static let sampleRates = 1_000...768_000
    static let channelCounts = 1...64
    let subject: String
    let info: AudioStreamInfo
    /// True when the container's declared duration can be trusted to detect truncation.
    let declaredDurationIsExact: Bool

    private let input: MediaInput
    private let streamTimeBase: AVRational
    private var formatContext: UnsafeMutablePointer<AVFormatContext>?
    private var codecContext: UnsafeMutablePointer<AVCodecContext>?
    private let streamIndex: Int32
    private var packet: UnsafeMutablePointer<AVPacket>?
    private var frame: UnsafeMutablePointer<AVFrame>?
    private var draining = false
    private var finished = false

    /// MP4/M4A: the edit list's duration in the stream's time base. FFmpeg drops the priming the edit
    /// list skips but still outputs the encoder's end padding; we stop at the declared end instead.
    private let editListDuration: Int64?
    private var framesReturned: Int64 = 0
    private var frameLimit: Int64?

    private(set) var packetsSent = 0
    private(set) var undecodablePackets = 0
    private(set) var readError: String?
    private var firstDecodeError: Int32 = 0

    init(input: MediaInput, subject: String) throws {
        _ = FFmpeg.setUp
        self.input = input
        self.subject = subject

        guard let context = avformat_alloc_context() else {
            throw AudioError(.unreadable, subject: subject, reason: "out of memory")
        }
        context.pointee.pb = input.context
        context.pointee.flags |= AVFMT_FLAG_CUSTOM_IO
        var opened: UnsafeMutablePointer<AVFormatContext>? = context
        // avformat_open_input frees the context on failure.
        try FFmpeg.check(
            avformat_open_input(&opened, nil, nil, nil), "avformat_open_input",
            subject: subject, reason: "not a recognised audio file", as: .unsupportedFormat)
        formatContext = opened

        do {
            try FFmpeg.check(
                avformat_find_stream_info(opened, nil), "avformat_find_stream_info",
                subject: subject, reason: "cannot read the stream layout", as: .corrupt)
            var decoder: UnsafePointer<AVCodec>?
            let index = av_find_best_stream(opened, AVMEDIA_TYPE_AUDIO, -1, -1, &decoder, 0)
            guard index >= 0, let decoder, let stream = opened!.pointee.streams[Int(index)] else {
                throw AudioError(
                    .unsupportedFormat, subject: subject,
                    reason: index == chorus_averror_decoder_not_found()
                        ? "no decoder for its audio codec" : "no audio stream found",
                    underlying: FFmpeg.message(index))
            }
            streamIndex = index
            let parameters = stream.pointee.codecpar!
            guard parameters.pointee.sample_rate > 0, parameters.pointee.ch_layout.nb_channels > 0 else {
                throw AudioError(.unsupportedFormat, subject: subject, reason: "not a recognised audio file (no decodable audio stream)")
            }
            // A header can declare anything (found by fuzzing: a WAV of 257 channels at 1 GHz made the reader
            // reserve 79 GB); no real recording is outside these.
            guard Self.sampleRates.contains(Int(parameters.pointee.sample_rate)),
                Self.channelCounts.contains(Int(parameters.pointee.ch_layout.nb_channels))
            else {
                throw AudioError(
                    .unsupportedFormat, subject: subject,
                    reason: "declares \(parameters.pointee.sample_rate) Hz and \(parameters.pointee.ch_layout.nb_channels) channels; "
                        + "Chorus reads \(Self.sampleRates.lowerBound)–\(Self.sampleRates.upperBound) Hz and up to \(Self.channelCounts.upperBound) channels"
                )
            }
            guard let codec = avcodec_alloc_context3(decoder) else {
                throw AudioError(.unreadable, subject: subject, reason: "out of memory")
            }
            codecContext = codec
            try FFmpeg.check(avcodec_parameters_to_context(codec, parameters), "avcodec_parameters_to_context", subject: subject)
            codec.pointee.pkt_timebase = stream.pointee.time_base
            codec.pointee.thread_count = 1
            try FFmpeg.check(
                avcodec_open2(codec, decoder, nil), "avcodec_open2", subject: subject,
                reason: "cannot open the \(String(cString: decoder.pointee.name)) decoder", as: .unsupportedFormat)
            packet = av_packet_alloc()
            frame = av_frame_alloc()
            guard packet != nil, frame != nil else {
                throw AudioError(.unreadable, subject: subject, reason: "out of memory")
            }

            let format = opened!.pointee
            var declared: Double?
            if stream.pointee.duration > 0 && stream.pointee.duration != FFmpeg.noTimestamp {
                declared = Double(stream.pointee.duration) * av_q2d(stream.pointee.time_base)
            } else if format.duration > 0 && format.duration != FFmpeg.noTimestamp {
                declared = Double(format.duration) / Double(AV_TIME_BASE)
            }
            let bitRate = parameters.pointee.bit_rate > 0 ? parameters.pointee.bit_rate : format.bit_rate
            info = AudioStreamInfo(
                container: String(cString: format.iformat.pointee.name),
                containerDescription: format.iformat.pointee.long_name.map { String(cString: $0) } ?? "",
                codec: String(cString: decoder.pointee.name),
                codecDescription: decoder.pointee.long_name.map { String(cString: $0) } ?? "",
                sampleRate: Int(parameters.pointee.sample_rate),
                channels: Int(parameters.pointee.ch_layout.nb_channels),
                bitRate: bitRate > 0 ? Int(bitRate) : nil,
                declaredDuration: declared)
            let isMP4 = String(cString: format.iformat.pointee.name).contains("mp4")
            editListDuration =
                isMP4 && stream.pointee.duration > 0 && stream.pointee.duration != FFmpeg.noTimestamp
                ? stream.pointee.duration : nil
            streamTimeBase = stream.pointee.time_base
            // Bit-rate estimates (MP3 without a Xing/Info header) and streaming placeholders are not declarations.
            declaredDurationIsExact =
                format.duration_estimation_method != AVFMT_DURATION_FROM_BITRATE
                && (declared ?? .infinity) < 10 * 3600
        } catch {
            avcodec_free_context(&codecContext)
            av_packet_free(&packet)
            av_frame_free(&frame)
            avformat_close_input(&formatContext)
            throw error
        }
    }

    deinit {
        av_frame_free(&frame)
        av_packet_free(&packet)
        avcodec_free_context(&codecContext)
        avformat_close_input(&formatContext)
    }

    /// The next decoded frame (valid until the next call), or `nil` at end of stream.
    func nextFrame() throws -> UnsafeMutablePointer<AVFrame>? {
        guard !finished, let codec = codecContext, let frame, let packet else { return nil }
        while true {
            let received = avcodec_receive_frame(codec, frame)
            if received == 0 {
                guard frame.pointee.nb_samples > 0 else { continue }
                if let editListDuration {
                    let limit =
                        frameLimit
                        ?? av_rescale_q(
                            editListDuration, streamTimeBase,
                            AVRational(num: 1, den: frame.pointee.sample_rate))
                    frameLimit = limit
                    let remaining = limit - framesReturned
                    if remaining <= 0 {
                        finished = true
                        return nil
                    }
                    if Int64(frame.pointee.nb_samples) > remaining { frame.pointee.nb_samples = Int32(remaining) }
                }
                framesReturned += Int64(frame.pointee.nb_samples)
                return frame
            }
            if received == FFmpeg.endOfFile {
                finished = true
                return nil
            }
            if received != FFmpeg.tryAgain {
                try noteUndecodable(received)
                if draining {
                    finished = true
                    return nil
                }
            }
            if draining {
                finished = true
                return nil
            }
            let read = av_read_frame(formatContext, packet)
            if read < 0 {
                if read != FFmpeg.endOfFile { readError = FFmpeg.message(read) }
                draining = true
                avcodec_send_packet(codec, nil)
                continue
            }
            defer { av_packet_unref(packet) }
            guard packet.pointee.stream_index == streamIndex else { continue }
            packetsSent += 1
            let sent = avcodec_send_packet(codec, packet)
            if sent < 0 && sent != FFmpeg.tryAgain {
                try noteUndecodable(sent)
            }
        }
    }

    private func noteUndecodable(_ code: Int32) throws {
        if code == FFmpeg.outOfMemory {
            throw AudioError(.unreadable, subject: subject, reason: "out of memory while decoding")
        }
        undecodablePackets += 1
        if firstDecodeError == 0 { firstDecodeError = code }
    }

    /// FFmpeg's message for the first frame that failed to decode.
    var firstDecodeErrorMessage: String? { firstDecodeError == 0 ? nil : FFmpeg.message(firstDecodeError) }
}
