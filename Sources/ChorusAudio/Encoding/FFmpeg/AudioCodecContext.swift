import CFFmpeg

/// One libavcodec audio encoder: takes interleaved Float32 in any amounts, sends it in the codec's
/// frame size (timestamps counted in samples from 0) and hands each packet out as it comes.
/// One owner of the codec context, its frame and packet (`deinit` frees them); used by one thread
/// of work at a time.
final class AudioCodecContext {
    let format: AudioFormat
    /// Samples per frame the codec takes (4,096 for a codec that takes any).
    private(set) var frameSize = 4096
    let subject: String
    // Every stored property has its value before `init` can throw, so `deinit` frees what was allocated.
    private(set) var context: UnsafeMutablePointer<AVCodecContext>?
    private var frame: UnsafeMutablePointer<AVFrame>?
    private var packet: UnsafeMutablePointer<AVPacket>?
    private var smallLastFrame = true
    private var sampleFormat = AV_SAMPLE_FMT_NONE
    private var pending: [Float] = []
    private var pendingStart = 0
    private var nextPTS: Int64 = 0

    /// - Parameters:
    ///   - codec: which encoder (the first of `codec.encoders` this FFmpeg has).
    ///   - globalHeader: put the codec's header in its extradata (containers that want it: MP4, Ogg).
    /// - Throws: `encodingFailed` when there is no such encoder or it rejects `format` at `bitRate`.
    init(codec: CodecEncoder.Codec, format: AudioFormat, bitRate: Int, globalHeader: Bool, subject: String) throws {
        _ = FFmpeg.setUp
        self.format = format
        self.subject = subject
        guard let encoder = codec.encoders.lazy.compactMap({ avcodec_find_encoder_by_name($0) }).first else {
            throw AudioError(
                .encodingFailed, subject: subject, reason: "this FFmpeg has no \(codec.label) encoder (\(codec.encoders.joined(separator: ", ")))")
        }
        context = avcodec_alloc_context3(encoder)
        frame = av_frame_alloc()
        packet = av_packet_alloc()
        guard let context, frame != nil, packet != nil else {
            throw AudioError(.encodingFailed, subject: subject, reason: "out of memory")
        }
        sampleFormat = Self.pickSampleFormat(encoder)
        context.pointee.sample_fmt = sampleFormat
        context.pointee.sample_rate = Int32(format.sampleRate)
        var layout = FFmpeg.channelLayout(channels: format.channels)
        defer { av_channel_layout_uninit(&layout) }
        try FFmpeg.check(
            av_channel_layout_copy(&context.pointee.ch_layout, &layout), "av_channel_layout_copy",
            subject: subject, as: .encodingFailed)
        context.pointee.bit_rate = Int64(bitRate)
        context.pointee.time_base = AVRational(num: 1, den: Int32(format.sampleRate))
        if globalHeader { context.pointee.flags |= AV_CODEC_FLAG_GLOBAL_HEADER }
        try FFmpeg.check(
            avcodec_open2(context, encoder, nil), "avcodec_open2", subject: subject,
            reason: "the \(codec.label) encoder rejects \(format) at \(bitRate / 1000) kbit/s", as: .encodingFailed)
        let capabilities = encoder.pointee.capabilities
        let fixed = Int(context.pointee.frame_size)
        if fixed > 0 { frameSize = fixed }
        smallLastFrame =
            fixed == 0 || capabilities & AV_CODEC_CAP_SMALL_LAST_FRAME != 0
            || capabilities & AV_CODEC_CAP_VARIABLE_FRAME_SIZE != 0
    }

    deinit {
        av_frame_free(&frame)
        av_packet_free(&packet)
        avcodec_free_context(&context)
    }

    private static func pickSampleFormat(_ encoder: UnsafePointer<AVCodec>) -> AVSampleFormat {
        guard var candidate = encoder.pointee.sample_fmts else { return AV_SAMPLE_FMT_FLTP }
        var supported: [AVSampleFormat] = []
        while candidate.pointee != AV_SAMPLE_FMT_NONE {
            supported.append(candidate.pointee)
            candidate += 1
        }
        for preferred in [AV_SAMPLE_FMT_FLTP, AV_SAMPLE_FMT_FLT, AV_SAMPLE_FMT_S16] where supported.contains(preferred) {
            return preferred
        }
        return supported.first ?? AV_SAMPLE_FMT_FLTP
    }

    /// Encodes `samples` (interleaved), whole frames at once; `packets` gets each packet produced,
    /// timestamps in samples (`1 / sampleRate`), valid only during the call.
    func write(_ samples: UnsafeBufferPointer<Float>, packets: (UnsafeMutablePointer<AVPacket>) throws -> Void) throws {
        pending.append(contentsOf: samples)
        let channels = format.channels
        while (pending.count - pendingStart) / channels >= frameSize {
            try send(frames: frameSize, packets: packets)
        }
        if pendingStart > 0 && pendingStart * 2 > pending.count {
            pending.removeFirst(pendingStart)
            pendingStart = 0
        }
    }

    /// Sends what is left (a short last frame where the codec takes one, else zero-padded), flushes the
    /// codec and hands out the remaining packets.
    func finish(packets: (UnsafeMutablePointer<AVPacket>) throws -> Void) throws {
        guard let context else { return }
        let remaining = (pending.count - pendingStart) / format.channels
        if remaining > 0 {
            try send(frames: smallLastFrame ? remaining : frameSize, packets: packets)
        }
        try FFmpeg.check(avcodec_send_frame(context, nil), "avcodec_send_frame", subject: subject, as: .encodingFailed)
        try drain(packets)
    }

    /// Sends `frames` frames from the front of `pending` (zero-padded when fewer remain).
    private func send(frames: Int, packets: (UnsafeMutablePointer<AVPacket>) throws -> Void) throws {
        guard let frame, let context else { return }
        let channels = format.channels
        av_frame_unref(frame)
        frame.pointee.nb_samples = Int32(frames)
        frame.pointee.format = sampleFormat.rawValue
        frame.pointee.sample_rate = Int32(format.sampleRate)
        try FFmpeg.check(
            av_channel_layout_copy(&frame.pointee.ch_layout, &context.pointee.ch_layout), "av_channel_layout_copy",
            subject: subject, as: .encodingFailed)
        try FFmpeg.check(av_frame_get_buffer(frame, 0), "av_frame_get_buffer", subject: subject, as: .encodingFailed)
        let available = min(frames, (pending.count - pendingStart) / channels)
        pending.withUnsafeBufferPointer { source in
            let base = source.baseAddress! + pendingStart
            switch sampleFormat {
            case AV_SAMPLE_FMT_FLTP:
                for channel in 0..<channels {
                    let plane = UnsafeMutableRawPointer(frame.pointee.extended_data[channel]!).assumingMemoryBound(to: Float.self)
                    for index in 0..<frames { plane[index] = index < available ? base[index * channels + channel] : 0 }
                }
            case AV_SAMPLE_FMT_FLT:
                let plane = UnsafeMutableRawPointer(frame.pointee.extended_data[0]!).assumingMemoryBound(to: Float.self)
                for index in 0..<(frames * channels) { plane[index] = index < available * channels ? base[index] : 0 }
            default:
                let plane = UnsafeMutableRawPointer(frame.pointee.extended_data[0]!).assumingMemoryBound(to: Int16.self)
                for index in 0..<(frames * channels) { plane[index] = index < available * channels ? PCM16.quantize(base[index]) : 0 }
            }
        }
        pendingStart += available * channels
        frame.pointee.pts = nextPTS
        nextPTS += Int64(frames)
        try FFmpeg.check(
            avcodec_send_frame(context, frame), "avcodec_send_frame", subject: subject,
            reason: "encoding failed", as: .encodingFailed)
        try drain(packets)
    }

    private func drain(_ packets: (UnsafeMutablePointer<AVPacket>) throws -> Void) throws {
        guard let context, let packet else { return }
        while true {
            let received = avcodec_receive_packet(context, packet)
            if received == FFmpeg.tryAgain || received == FFmpeg.endOfFile { return }
            try FFmpeg.check(received, "avcodec_receive_packet", subject: subject, reason: "encoding failed", as: .encodingFailed)
            defer { av_packet_unref(packet) }
            try packets(packet)
        }
    }
}
