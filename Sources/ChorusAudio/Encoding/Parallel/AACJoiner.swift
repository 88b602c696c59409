import CFFmpeg

/// AAC in M4A in pieces (`ParallelEncoder<AACJoiner>`): libavcodec AAC encoders of identical settings on
/// the 1,024-sample packet grid, their packets muxed as one stream.
///
/// An encoder started at `e` gives first a priming packet (pts `e − 1024`), then one packet per 1,024
/// samples: its packet `k` is packet `k + e / 1024` of a single encoder over the whole stream. A piece whose
/// part starts at `q` keeps its packets with timestamps `q − 1024 ..< next cut − 1024` (cut in silence, `e = q` and
/// the first is its priming packet, standing for the silence before `q`; cut overlapped, its encoder started
/// `overlap.before` packets early and the first kept is a warm one), the timestamps are shifted by `e`, and the MP4
/// muxer writes one edit list for the whole stream: the first piece's priming is skipped and the last piece's short
/// last packet ends it, so the decoded length is exact. AAC packets stand alone (no bit reservoir across them), so
/// an overlapped splice differs from one encoder only by the two encoders' quantization where their MDCT windows overlap.
final class AACJoiner: PieceJoiner {
    let frameSize: Int
    /// Silent samples each side of a cut: one whole MDCT window (2,048). Measured with gaps of `2 × margin + 1024`
    /// at 8, 16, 24, 44.1, 48 and 96 kHz, mono and stereo: 2,048 left every sample within ±512 of each cut and
    /// around every gap's middle exactly 0; 1,536 did not in 2 of 12 cases (48 and 96 kHz stereo, one LSB), 1,024
    /// in 4, 256 in all. `ParallelEncoderTests` checks every AAC rate with it.
    static let defaultMargin = 2_048
    let margin: Int
    /// Overlapped cuts: 32 packets warm a piece's encoder and the piece before is given 4 past the cut, so its last kept
    /// packet and the one after it, which the encoder's look-ahead reads, hold the stream's samples. The splices are
    /// clean, but FFmpeg's AAC rate control adapts over tens of seconds from where a fresh encoder starts: measured
    /// under a bed, pieces warmed by 8 packets were up to 3× noisier for their first ~40 packets, and by 32–128 still
    /// 1.07–1.27× one encoder's noise over the whole file at some rates. So renders with a bed encode M4A with one
    /// encoder (`EncoderFactory`); overlapped AAC stays for tests of the joins.
    let overlap = PieceOverlap(before: 32, after: 4)
    private let muxer: Muxer
    private let format: AudioFormat
    private let bitRate: Int
    private let chapterTitles: [String]
    private var first: AACPiece?
    private var packet: UnsafeMutablePointer<AVPacket>?
    private var packets = 0

    init(output: EncodedOutput, format: AudioFormat, bitRate: Int, chapterTitles: [String], margin: Int = AACJoiner.defaultMargin) throws {
        self.format = format
        self.bitRate = bitRate
        self.chapterTitles = chapterTitles
        self.margin = margin
        muxer = try Muxer(output: output, name: CodecEncoder.Codec.aacInM4A.muxer)
        let first = try Self.piece(format: format, bitRate: bitRate, muxer: muxer)
        self.first = first
        frameSize = first.codec.frameSize
        packet = av_packet_alloc()
        guard packet != nil else { throw AudioError(.encodingFailed, subject: output.subject, reason: "out of memory") }
        try muxer.addStream(first.codec)
        try muxer.writeHeader()
    }

    deinit { av_packet_free(&packet) }

    func makeCodec(index: Int, start: Int) throws -> AACPiece {
        if index == 0, let first {
            self.first = nil
            return first
        }
        return try Self.piece(format: format, bitRate: bitRate, muxer: muxer)
    }

    /// A fresh encoder with the stream's settings, its header where `muxer` wants it.
    private static func piece(format: AudioFormat, bitRate: Int, muxer: Muxer) throws -> AACPiece {
        try AACPiece(format: format, bitRate: bitRate, globalHeader: muxer.wantsGlobalHeader, subject: muxer.subject)
    }

    func append(_ piece: AACPiece.Encoded, span: PieceSpan) throws {
        guard let packet else { return }
        // Timestamps relative to the piece's encoder: from the packet before its start to the one before its end.
        let first = Int64(span.start - frameSize - span.encoderStart)
        let last = span.end.map { Int64($0 - frameSize - span.encoderStart) } ?? .max
        let kept = piece.packets.filter { $0.pts >= first && $0.pts < last }
        if let end = span.end, kept.count != (end - span.start) / frameSize {
            throw AudioError(
                .encodingFailed, subject: muxer.subject,
                reason: "an AAC piece has \(kept.count) packets where the \((end - span.start) / frameSize) it covers belong")
        }
        for kept in kept {
            defer { av_packet_unref(packet) }  // blank already when the muxer took it
            try FFmpeg.check(av_new_packet(packet, Int32(kept.bytes.count)), "av_new_packet", subject: muxer.subject, as: .encodingFailed)
            piece.bytes.withUnsafeBufferPointer { bytes in
                packet.pointee.data.update(from: bytes.baseAddress! + kept.bytes.lowerBound, count: kept.bytes.count)
            }
            packet.pointee.pts = kept.pts + Int64(span.encoderStart)
            packet.pointee.dts = packet.pointee.pts
            packet.pointee.duration = kept.duration
            packet.pointee.flags = kept.flags
            try muxer.write(packet)
            packets += 1
        }
    }

    func finish(samples: Int, chapters: [ChapterMark]) throws {
        // One priming packet, then one per started 1,024 samples: what a single encoder gives.
        let expected = (samples + frameSize - 1) / frameSize + 1
        guard packets == expected || samples == 0 else {
            throw AudioError(
                .encodingFailed, subject: muxer.subject,
                reason: "the joined AAC pieces hold \(packets) packets where \(samples) samples need \(expected)")
        }
        let marks = Array(chapters.prefix(chapterTitles.count))
        if !marks.isEmpty { try muxer.addChapters(marks) }
        try muxer.finish()
    }
}

/// One AAC piece's encoder (`PieceCodec`): its packets kept in memory until the piece is written.
final class AACPiece: PieceCodec {
    struct Packet {
        var bytes: Range<Int>
        /// In samples from the piece's start: the priming packet is at −1024.
        var pts: Int64
        var duration: Int64
        var flags: Int32
    }

    struct Encoded {
        var bytes: [UInt8]
        var packets: [Packet]
    }

    let codec: AudioCodecContext
    private var encoded = Encoded(bytes: [], packets: [])

    init(format: AudioFormat, bitRate: Int, globalHeader: Bool, subject: String) throws {
        codec = try AudioCodecContext(codec: .aacInM4A, format: format, bitRate: bitRate, globalHeader: globalHeader, subject: subject)
    }

    func encode(_ samples: UnsafeBufferPointer<Float>) throws {
        try codec.write(samples, packets: keep)
    }

    func finish() throws -> Encoded {
        try codec.finish(packets: keep)
        return encoded
    }

    private func keep(_ packet: UnsafeMutablePointer<AVPacket>) {
        let size = Int(packet.pointee.size)
        let start = encoded.bytes.count
        if size > 0, let data = packet.pointee.data { encoded.bytes.append(contentsOf: UnsafeBufferPointer(start: data, count: size)) }
        encoded.packets.append(
            Packet(
                bytes: start..<(start + size), pts: packet.pointee.pts, duration: packet.pointee.duration,
                flags: packet.pointee.flags))
    }
}
