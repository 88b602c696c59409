import CFFmpeg

/// One libavformat muxer with one audio stream, writing into an `EncodedOutput` through `MuxerOutput`.
/// One owner of the format context (`deinit` frees it; the I/O context belongs to `io`).
///
/// Order of use: `init`, `addStream` (from an opened codec), `writeHeader`, `write` packets in
/// order, `finish`. `addChapters` (after `addStream`, whose rate times them) goes before `writeHeader`
/// for containers that put chapters in their header (Ogg) and before `finish` for MP4, which writes them at the trailer.
final class Muxer {
    let io: MuxerOutput
    let name: String
    private var context: UnsafeMutablePointer<AVFormatContext>?
    private var stream: UnsafeMutablePointer<AVStream>?
    private var sampleRate = 0
    /// Where the bytes go, and how errors name it.
    var output: EncodedOutput { io.output }
    var subject: String { io.output.subject }

    /// - Parameter name: libavformat's name of the container (`ipod`, `ogg`, `adts`).
    init(output: EncodedOutput, name: String) throws {
        _ = FFmpeg.setUp
        self.name = name
        io = try MuxerOutput(output: output)
        try FFmpeg.check(
            avformat_alloc_output_context2(&context, nil, name, nil), "avformat_alloc_output_context2",
            subject: output.subject, reason: "cannot set up the \(name) muxer", as: .encodingFailed)
        context!.pointee.pb = io.context
    }

    deinit {
        if let context {
            context.pointee.pb = nil  // owned by `io`
            avformat_free_context(context)
        }
    }

    /// True when the container wants the codec's header in its extradata (`AudioCodecContext`'s `globalHeader`).
    var wantsGlobalHeader: Bool { context!.pointee.oformat.pointee.flags & AVFMT_GLOBALHEADER != 0 }

    /// Adds the stream `codec` encodes (its parameters and time base).
    func addStream(_ codec: AudioCodecContext) throws {
        guard let made = avformat_new_stream(context, nil) else {
            throw AudioError(.encodingFailed, subject: subject, reason: "out of memory")
        }
        stream = made
        try FFmpeg.check(
            avcodec_parameters_from_context(made.pointee.codecpar, codec.context), "avcodec_parameters_from_context",
            subject: subject, as: .encodingFailed)
        made.pointee.time_base = AVRational(num: 1, den: Int32(codec.format.sampleRate))
        sampleRate = codec.format.sampleRate
    }

    /// Writes the container's header and returns its bytes. MP4's edit list is expressed in samples,
    /// not the default 1/1000 s, so its end is exact.
    @discardableResult
    func writeHeader() throws -> [UInt8] {
        var options: OpaquePointer?
        defer { av_dict_free(&options) }
        if name == "ipod" || name == "mp4" {
            try FFmpeg.check(
                av_dict_set(&options, "movie_timescale", String(sampleRate), 0), "av_dict_set",
                subject: subject, as: .encodingFailed)
        }
        do {
            return try io.capture {
                try FFmpeg.check(
                    avformat_write_header(context, &options), "avformat_write_header", subject: subject,
                    reason: "cannot write the \(name) header", as: .writeFailed)
            }
        } catch {
            throw io.error(or: error)
        }
    }

    /// Writes one packet, its timestamps in samples (`1 / sampleRate`); the muxer takes its data.
    func write(_ packet: UnsafeMutablePointer<AVPacket>) throws {
        guard let stream else { preconditionFailure("Muxer.write before addStream") }
        av_packet_rescale_ts(packet, AVRational(num: 1, den: Int32(sampleRate)), stream.pointee.time_base)
        packet.pointee.stream_index = stream.pointee.index
        do {
            try FFmpeg.check(
                av_interleaved_write_frame(context, packet), "av_interleaved_write_frame", subject: subject,
                reason: "cannot write", as: .writeFailed)
        } catch {
            throw io.error(or: error)
        }
    }

    /// Appends `chapters` to the muxer's list, times in frames.
    func addChapters(_ chapters: [ChapterMark]) throws {
        guard let context else { return }
        for (index, mark) in chapters.enumerated() {
            guard let chapter = chorus_add_chapter(context) else {
                throw AudioError(.encodingFailed, subject: subject, reason: "out of memory")
            }
            chapter.pointee.id = Int64(index + 1)
            chapter.pointee.time_base = AVRational(num: 1, den: Int32(sampleRate))
            chapter.pointee.start = Int64(mark.frames.lowerBound)
            chapter.pointee.end = Int64(mark.frames.upperBound)
            try FFmpeg.check(
                av_dict_set(&chapter.pointee.metadata, "title", mark.title, 0), "av_dict_set",
                subject: subject, as: .encodingFailed)
        }
    }

    /// Writes the trailer and everything still buffered.
    func finish() throws {
        do {
            try FFmpeg.check(av_write_trailer(context), "av_write_trailer", subject: subject, reason: "cannot finish the file", as: .writeFailed)
        } catch {
            throw io.error(or: error)
        }
        try io.flush()
    }
}
