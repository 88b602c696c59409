import CFFmpeg
import Foundation

/// Encodes through libavcodec and muxes through libavformat: AAC in M4A and Opus in Ogg for
/// renders; ADTS AAC and Vorbis in Ogg for test fixtures.
///
/// The muxers record encoder delay (MP4 edit list, Ogg Opus pre-skip) and the true end (last
/// packet duration / granule position), so decoders yield exactly the samples written.
///
/// Chapters: MP4 takes them at the trailer (libavformat adds a chapter track and a `chpl` list);
/// Ogg writes them into its comment header, so the header goes out with zero times and is
/// rewritten at the end (`OggChapterTimes`); a stream, which cannot wait for the times, gets the
/// same header pages without the chapter comments.
/// One owner of the muxer, codec context, frame and packet (`deinit` frees them).
package final class CodecEncoder: AudioEncoder {
    package struct Codec {
        var muxer: String
        var encoders: [String]
        var label: String

        package static let aacInM4A = Codec(muxer: "ipod", encoders: ["aac"], label: "AAC")
        package static let opusInOgg = Codec(muxer: "ogg", encoders: ["libopus"], label: "Opus")
        package static let aacInADTS = Codec(muxer: "adts", encoders: ["aac"], label: "AAC")
        package static let vorbisInOgg = Codec(muxer: "ogg", encoders: ["libvorbis", "vorbis"], label: "Vorbis")
    }

    package let format: AudioFormat
    private let io: MuxerOutput
    private let subject: String
    private var muxer: UnsafeMutablePointer<AVFormatContext>?
    private var context: UnsafeMutablePointer<AVCodecContext>?
    private var frame: UnsafeMutablePointer<AVFrame>?
    private var packet: UnsafeMutablePointer<AVPacket>?
    private var stream: UnsafeMutablePointer<AVStream>
    private let frameSize: Int
    private let smallLastFrame: Bool
    private let sampleFormat: AVSampleFormat
    private var pending: [Float] = []
    private var pendingStart = 0
    private var nextPTS: Int64 = 0
    private var headerWritten = false
    private let chapterTitles: [String]
    /// Ogg: the header pages as first written, to rewrite with the chapter times.
    private var headerPages: [UInt8] = []
    private var finished = false

    package init(output: EncodedOutput, format: AudioFormat, codec: Codec, bitRate: Int, chapterTitles: [String] = []) throws {
        _ = FFmpeg.setUp
        self.format = format
        let inHeader = codec.muxer == "ogg"
        // A streamed Ogg header leaves the chapters out, which needs the comment packet in one page
        // (≈ 500 chapters); a stream alone keeps nothing to rewrite.
        let streamable = output.keepsBytes && OggChapterTimes.commentBytes(titles: chapterTitles) < 60_000
        let chapterTitles = inHeader && output.isStreaming && !streamable ? [] : chapterTitles
        self.chapterTitles = chapterTitles
        let holdBack = inHeader && !chapterTitles.isEmpty && output.isStreaming
        let subject = output.subject
        self.subject = subject
        let io = try MuxerOutput(output: output)
        self.io = io
        guard let encoder = codec.encoders.lazy.compactMap({ avcodec_find_encoder_by_name($0) }).first else {
            throw AudioError(.encodingFailed, subject: subject, reason: "this FFmpeg has no \(codec.label) encoder (\(codec.encoders.joined(separator: ", ")))")
        }
        var output: UnsafeMutablePointer<AVFormatContext>?
        try FFmpeg.check(avformat_alloc_output_context2(&output, nil, codec.muxer, nil), "avformat_alloc_output_context2",
                         subject: subject, reason: "cannot set up the \(codec.muxer) muxer", as: .encodingFailed)
        muxer = output
        var made: UnsafeMutablePointer<AVCodecContext>?
        var madeStream: UnsafeMutablePointer<AVStream>?
        var chosenFormat = AV_SAMPLE_FMT_NONE
        do {
            guard let newStream = avformat_new_stream(output, nil), let codecContext = avcodec_alloc_context3(encoder) else {
                throw AudioError(.encodingFailed, subject: subject, reason: "out of memory")
            }
            madeStream = newStream
            made = codecContext
            chosenFormat = Self.pickSampleFormat(encoder)
            codecContext.pointee.sample_fmt = chosenFormat
            codecContext.pointee.sample_rate = Int32(format.sampleRate)
            var layout = FFmpeg.channelLayout(channels: format.channels)
            defer { av_channel_layout_uninit(&layout) }
            try FFmpeg.check(av_channel_layout_copy(&codecContext.pointee.ch_layout, &layout), "av_channel_layout_copy",
                             subject: subject, as: .encodingFailed)
            codecContext.pointee.bit_rate = Int64(bitRate)
            codecContext.pointee.time_base = AVRational(num: 1, den: Int32(format.sampleRate))
            if output!.pointee.oformat.pointee.flags & AVFMT_GLOBALHEADER != 0 {
                codecContext.pointee.flags |= AV_CODEC_FLAG_GLOBAL_HEADER
            }
            try FFmpeg.check(avcodec_open2(codecContext, encoder, nil), "avcodec_open2", subject: subject,
                             reason: "the \(codec.label) encoder rejects \(format) at \(bitRate / 1000) kbit/s", as: .encodingFailed)
            try FFmpeg.check(avcodec_parameters_from_context(newStream.pointee.codecpar, codecContext), "avcodec_parameters_from_context",
                             subject: subject, as: .encodingFailed)
            newStream.pointee.time_base = codecContext.pointee.time_base
            output!.pointee.pb = io.context
            // MP4: express the edit list in samples, not the default 1/1000 s, so its end is exact.
            var muxerOptions: OpaquePointer?
            defer { av_dict_free(&muxerOptions) }
            if codec.muxer == "ipod" || codec.muxer == "mp4" {
                try FFmpeg.check(av_dict_set(&muxerOptions, "movie_timescale", String(format.sampleRate), 0), "av_dict_set",
                                 subject: subject, as: .encodingFailed)
            }
            if inHeader {
                try Self.addChapters(chapterTitles.map { ChapterMark(title: $0, frames: 0..<0) }, to: output!,
                                     sampleRate: format.sampleRate, subject: subject)
            }
            do {
                if holdBack { io.output.reservePlaceholder(bytes: .max) }
                let pages = try io.capture {
                    try FFmpeg.check(avformat_write_header(output, &muxerOptions), "avformat_write_header", subject: subject,
                                     reason: "cannot write the \(codec.muxer) header", as: .writeFailed)
                }
                if inHeader && !chapterTitles.isEmpty { headerPages = pages }
                if holdBack {
                    guard let plain = OggChapterTimes.withoutChapters(pages) else {
                        throw AudioError(.encodingFailed, subject: subject, reason: "cannot stream the Ogg header without its chapters")
                    }
                    io.output.reservePlaceholder(bytes: pages.count)
                    io.output.sendToStream(plain)
                }
            } catch {
                throw io.error(or: error)
            }
        } catch {
            avcodec_free_context(&made)
            output?.pointee.pb = nil
            avformat_free_context(output)
            muxer = nil
            throw error
        }
        headerWritten = true
        context = made
        stream = madeStream!
        sampleFormat = chosenFormat
        let capabilities = encoder.pointee.capabilities
        let fixed = Int(made!.pointee.frame_size)
        frameSize = fixed > 0 ? fixed : 4096
        smallLastFrame = fixed == 0 || capabilities & AV_CODEC_CAP_SMALL_LAST_FRAME != 0
            || capabilities & AV_CODEC_CAP_VARIABLE_FRAME_SIZE != 0
        frame = av_frame_alloc()
        packet = av_packet_alloc()
        guard frame != nil, packet != nil else {
            throw AudioError(.encodingFailed, subject: subject, reason: "out of memory")
        }
    }

    deinit {
        av_frame_free(&frame)
        av_packet_free(&packet)
        avcodec_free_context(&context)
        if let muxer {
            muxer.pointee.pb = nil   // owned by `io`
            avformat_free_context(muxer)
        }
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

    package func write(_ samples: UnsafeBufferPointer<Float>, pcm16: UnsafeBufferPointer<Int16>) throws {
        pending.append(contentsOf: samples)
        let channels = format.channels
        while (pending.count - pendingStart) / channels >= frameSize {
            try send(frames: frameSize)
        }
        if pendingStart > 0 && pendingStart * 2 > pending.count {
            pending.removeFirst(pendingStart)
            pendingStart = 0
        }
    }

    /// Sends `frames` frames from the front of `pending` (zero-padded when fewer remain).
    private func send(frames: Int) throws {
        guard let frame, let context else { return }
        let channels = format.channels
        av_frame_unref(frame)
        frame.pointee.nb_samples = Int32(frames)
        frame.pointee.format = sampleFormat.rawValue
        frame.pointee.sample_rate = Int32(format.sampleRate)
        try FFmpeg.check(av_channel_layout_copy(&frame.pointee.ch_layout, &context.pointee.ch_layout), "av_channel_layout_copy",
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
        try FFmpeg.check(avcodec_send_frame(context, frame), "avcodec_send_frame", subject: subject,
                         reason: "encoding failed", as: .encodingFailed)
        try drainPackets()
    }

    private func drainPackets() throws {
        guard let context, let packet else { return }
        while true {
            let received = avcodec_receive_packet(context, packet)
            if received == FFmpeg.tryAgain || received == FFmpeg.endOfFile { return }
            try FFmpeg.check(received, "avcodec_receive_packet", subject: subject, reason: "encoding failed", as: .encodingFailed)
            av_packet_rescale_ts(packet, context.pointee.time_base, stream.pointee.time_base)
            packet.pointee.stream_index = stream.pointee.index
            do {
                try FFmpeg.check(av_interleaved_write_frame(muxer, packet), "av_interleaved_write_frame", subject: subject,
                                 reason: "cannot write", as: .writeFailed)
            } catch {
                throw io.error(or: error)
            }
        }
    }

    /// Appends `chapters` to the muxer's list, times in frames.
    private static func addChapters(_ chapters: [ChapterMark], to muxer: UnsafeMutablePointer<AVFormatContext>,
                                    sampleRate: Int, subject: String) throws {
        for (index, mark) in chapters.enumerated() {
            guard let chapter = chorus_add_chapter(muxer) else {
                throw AudioError(.encodingFailed, subject: subject, reason: "out of memory")
            }
            chapter.pointee.id = Int64(index + 1)
            chapter.pointee.time_base = AVRational(num: 1, den: Int32(sampleRate))
            chapter.pointee.start = Int64(mark.frames.lowerBound)
            chapter.pointee.end = Int64(mark.frames.upperBound)
            try FFmpeg.check(av_dict_set(&chapter.pointee.metadata, "title", mark.title, 0), "av_dict_set",
                             subject: subject, as: .encodingFailed)
        }
    }

    package func finish(chapters: [ChapterMark]) throws {
        guard !finished, let context else { return }
        finished = true
        let remaining = (pending.count - pendingStart) / format.channels
        if remaining > 0 {
            try send(frames: smallLastFrame ? remaining : frameSize)
        }
        try FFmpeg.check(avcodec_send_frame(context, nil), "avcodec_send_frame", subject: subject, as: .encodingFailed)
        try drainPackets()
        let marks = Array(chapters.prefix(chapterTitles.count))
        if headerPages.isEmpty, let muxer, !marks.isEmpty {
            try Self.addChapters(marks, to: muxer, sampleRate: format.sampleRate, subject: subject)
        }
        do {
            try FFmpeg.check(av_write_trailer(muxer), "av_write_trailer", subject: subject, reason: "cannot finish the file", as: .writeFailed)
        } catch {
            throw io.error(or: error)
        }
        try io.flush()
        if !headerPages.isEmpty {
            let times = chapterTitles.indices.map { index in
                WebVTT.timestamp(milliseconds: index < marks.count
                    ? ChapterMark.milliseconds(frames: marks[index].frames.lowerBound, sampleRate: format.sampleRate) : 0)
            }
            try OggChapterTimes.patch(&headerPages, times: times, subject: subject)
            try headerPages.withUnsafeBytes { try io.output.overwrite($0, at: 0) }
        }
    }
}
