import CLame

/// MP3 in pieces (`ParallelEncoder<MP3Joiner>`): LAME encoders of identical settings on the MP3 frame
/// grid (1152 samples, 576 at 24 kHz and below), their frames written back to back after one LAME/Xing
/// tag rewritten for the joined stream (`MP3Stream.lameTag`: frame and byte counts, seek table, delay
/// and padding, music CRC), and the ID3 chapter tag in front when there are chapters.
///
/// **Splices and the bit reservoir.** A layer III frame's main data may begin in the frames before it
/// (`main_data_begin`, up to 511 bytes back). Each piece is held until the next arrives and they are spliced at
/// a frame `j`: the piece before gives its frames up to `j`, the next its frames from `j`. The main data the
/// next piece's frame `j` borrows from its own earlier frames is copied into the end of the main data areas
/// before `j`, where the piece before had its own frame `j`'s data (now dropped, so free); the rest of that
/// free space is zeroed. A cut in silence splices at the cut, where the next piece's encoder is fresh and
/// borrows nothing. An overlapped cut (no silence: a music bed) splices at the first frame in the overlap where
/// the next piece borrows no more than the piece before leaves free — within a few frames past the cut in every
/// stream measured, as the fresh encoder's reservoir is still filling — or, failing that, at the cut with the
/// frame before it widened to the highest bit rate of its MPEG version to make room (the stream is then not
/// strictly constant bit rate at that one frame; decoders and the seek table take it as it is).
final class MP3Joiner: PieceJoiner {
    let frameSize: Int
    /// 576 silent samples on each side of a cut kept the splice exact at the six rates tried (8–48 kHz, mono and
    /// stereo; 288 did not); twice that for a margin. `ParallelEncoderTests` checks all nine MPEG rates with it.
    static let defaultMargin = 1152
    var margin: Int { Self.defaultMargin }
    /// Overlapped cuts: 8 frames warm the next piece's encoder (LAME's 1,105-sample delay, its psychoacoustic model
    /// and block switching); the piece before is given 16 past the cut, of which the first 13 may be spliced at
    /// (the last 3 frames' input reaches into the flush's zeros through LAME's delay and look-ahead).
    let overlap = PieceOverlap(before: 8, after: 16)
    /// How splices are made: `.firstFitting` but in tests.
    let spliceRule: SpliceRule

    enum SpliceRule {
        /// At the first frame in the overlap where the borrowed main data fits; at the cut, widening, if none does.
        case firstFitting
        /// At the cut, always widening the frame before (tests: the fallback at work).
        case atCutWidening
        /// As `.firstFitting` but with zeros for the borrowed main data (tests: the splice check can fail).
        case withoutBorrowedData
    }
    /// Each splice: the frame it is at, the main data bytes the next piece borrowed there, and whether the frame
    /// before it was widened to make room.
    private(set) var splices: [(frame: Int, borrowed: Int, widened: Bool)] = []
    private let output: EncodedOutput
    private let format: AudioFormat
    private let bitRate: Int
    private let quality: Int
    private let chapterTag: ID3ChapterTag?
    private var tagFrameBytes = 0
    /// What has gone into the output: the audio frames' offsets (for the seek table) and their CRC.
    private var frameOffsets: [Int] = []
    private var audioBytes = 0
    private var musicCRC: UInt16 = 0
    private var tagTemplate: [UInt8] = []
    /// The last piece appended, waiting for the next to be spliced to.
    private var held: Held?

    /// A piece's audio frames and where they stand in the stream.
    private struct Held {
        var bytes: [UInt8]
        var frames: [Range<Int>]
        /// Stream frame of `frames[0]`.
        var first: Int
        /// Stream frame of the first frame still to be written (where the splice before it put it).
        var from: Int
    }

    init(
        output: EncodedOutput, format: AudioFormat, bitRate: Int, quality: Int, chapterTitles: [String], growingTitles: Int = 0,
        spliceRule: SpliceRule = .firstFitting
    ) throws {
        self.output = output
        self.format = format
        self.bitRate = bitRate
        self.quality = quality
        frameSize = MP3Stream.samplesPerFrame(sampleRate: format.sampleRate)
        chapterTag = chapterTitles.isEmpty ? nil : try ID3ChapterTag(titles: chapterTitles, growing: growingTitles)
        self.spliceRule = spliceRule
    }

    func makeCodec(index: Int, start: Int) throws -> LAMEPiece {
        let piece = try LAMEPiece(format: format, bitRate: bitRate, quality: quality, tag: index == 0, subject: output.subject)
        if index == 0 {
            tagFrameBytes = piece.tagFrameBytes
            output.reservePlaceholder(bytes: (chapterTag?.size ?? 0) + tagFrameBytes)
            try chapterTag?.writePlaceholder(into: output)
        }
        return piece
    }

    func append(_ piece: LAMEPiece.Encoded, span: PieceSpan) throws {
        var frames = piece.frames
        if span.index == 0 && tagFrameBytes > 0 && !frames.isEmpty {
            // The first piece's first frame is LAME's placeholder for the tag: it goes out as the placeholder.
            guard let placeholder = frames.first, placeholder.count == tagFrameBytes else {
                throw AudioError(.encodingFailed, subject: output.subject, reason: "LAME wrote no tag placeholder of \(tagFrameBytes) bytes")
            }
            try piece.bytes.withUnsafeBytes { try output.append(UnsafeRawBufferPointer(rebasing: $0[placeholder])) }
            frames.removeFirst()
            tagTemplate = piece.tagTemplate
        }
        let next = Held(bytes: piece.bytes, frames: frames, first: span.encoderStart / frameSize, from: span.start / frameSize)
        if let held {
            self.held = try splice(held, to: next, overlapped: span.encoderStart < span.start)
        } else {
            held = next
        }
    }

    func finish(samples: Int, chapters: [ChapterMark]) throws {
        if let held {
            try write(held, upTo: held.first + held.frames.count)
            self.held = nil
        }
        try chapterTag?.write(chapters: chapters, sampleRate: format.sampleRate, into: output)
        guard tagFrameBytes > 0, !frameOffsets.isEmpty, tagTemplate.count == tagFrameBytes else { return }
        let tag = try MP3Stream.lameTag(
            template: tagTemplate, frameOffsets: frameOffsets, audioBytes: audioBytes,
            samplesPerFrame: frameSize, samples: samples, musicCRC: musicCRC, subject: output.subject)
        try tag.withUnsafeBytes { try output.overwrite($0, at: chapterTag?.size ?? 0) }
    }

    /// Writes `before`'s frames up to the splice with `next` and returns `next`, to be written from the splice on.
    private func splice(_ before: Held, to next: Held, overlapped: Bool) throws -> Held {
        let cut = next.from
        guard cut - before.first <= before.frames.count, cut - next.first < next.frames.count else {
            throw AudioError(
                .encodingFailed, subject: output.subject,
                reason: "MP3 pieces of \(before.frames.count) and \(next.frames.count) frames do not reach frame \(cut), where they join")
        }
        // Main data the frame borrows from before it, for either piece (a frame past the piece's end leaves nothing free).
        func begin(_ piece: Held, _ frame: Int) -> Int {
            let index = frame - piece.first
            guard index >= 0, index < piece.frames.count else { return 0 }
            return piece.bytes.withUnsafeBufferPointer { MP3Stream.mainData($0, at: piece.frames[index].lowerBound).begin }
        }
        let window =
            overlapped ? cut..<min(cut + overlap.after - 3, before.first + before.frames.count, next.first + next.frames.count) : cut..<(cut + 1)
        var at = spliceRule == .atCutWidening ? nil : window.first { begin(next, $0) <= begin(before, $0) }
        var widening: (header: [UInt8], extra: Int)?
        if at == nil {
            at = cut
            let last = before.frames[cut - 1 - before.first].lowerBound
            widening = before.bytes.withUnsafeBufferPointer { MP3Stream.widened($0, at: last) }
            guard let widening, begin(before, cut) + widening.extra >= begin(next, cut) else {
                throw AudioError(
                    .encodingFailed, subject: output.subject,
                    reason: "no room for the \(begin(next, cut)) bytes of main data MP3 frame \(cut) borrows at a splice")
            }
        }
        let frame = at ?? cut
        var borrowed = try mainData(of: next, before: frame, count: begin(next, frame))
        if spliceRule == .withoutBorrowedData { borrowed = [UInt8](repeating: 0, count: borrowed.count) }
        try write(before, upTo: frame, borrowed: borrowed, free: begin(before, frame) + (widening?.extra ?? 0), widening: widening)
        splices.append((frame, borrowed.count, widening != nil))
        var rest = next
        rest.from = frame
        return rest
    }

    /// The last `count` bytes of main data before `piece`'s frame `frame` (skipping headers and side information).
    private func mainData(of piece: Held, before frame: Int, count: Int) throws -> [UInt8] {
        var collected: [UInt8] = []
        var index = frame - piece.first - 1
        try piece.bytes.withUnsafeBufferPointer { bytes in
            while collected.count < count {
                guard index >= 0 else {
                    throw AudioError(.encodingFailed, subject: output.subject, reason: "MP3 frame \(frame) borrows more main data than its piece has")
                }
                let range = piece.frames[index]
                let area = (range.lowerBound + MP3Stream.mainData(bytes, at: range.lowerBound).areaStart)..<range.upperBound
                let take = min(count - collected.count, area.count)
                collected.insert(contentsOf: bytes[(area.upperBound - take)..<area.upperBound], at: 0)
                index -= 1
            }
        }
        return collected
    }

    /// Writes `piece`'s frames from its `from` up to stream frame `end`; the last `free` bytes of their main data areas
    /// (the dropped frames' data) hold `borrowed` at their end and zeros before it. `widening` replaces the last frame's
    /// header and lengthens it.
    private func write(
        _ piece: Held, upTo end: Int, borrowed: [UInt8] = [], free: Int = 0,
        widening: (header: [UInt8], extra: Int)? = nil
    ) throws {
        let kept = piece.frames[(piece.from - piece.first)..<(end - piece.first)]
        guard let first = kept.first, let last = kept.last else { return }
        var bytes = Array(piece.bytes[first.lowerBound..<last.upperBound])
        let starts = kept.map { $0.lowerBound - first.lowerBound }
        if let widening {
            bytes.replaceSubrange(starts[starts.count - 1]..<(starts[starts.count - 1] + 4), with: widening.header)
            bytes += [UInt8](repeating: 0, count: widening.extra)
        }
        // The free bytes, from the last backwards, across the frames' main data areas.
        var left = free
        var areaEnd = bytes.count
        bytes.withUnsafeMutableBufferPointer { buffer in
            for index in starts.indices.reversed() where left > 0 {
                let areaStart = starts[index] + MP3Stream.mainData(UnsafeBufferPointer(buffer), at: starts[index]).areaStart
                var position = areaEnd - 1
                while position >= areaStart && left > 0 {
                    let fromEnd = free - left
                    buffer[position] = fromEnd < borrowed.count ? borrowed[borrowed.count - 1 - fromEnd] : 0
                    position -= 1
                    left -= 1
                }
                areaEnd = starts[index]
            }
        }
        guard left == 0 else {
            throw AudioError(
                .encodingFailed, subject: output.subject, reason: "an MP3 piece is too short to hold the main data of the piece after it")
        }
        for start in starts { frameOffsets.append(audioBytes + start) }
        try bytes.withUnsafeBufferPointer { buffer in
            musicCRC = MP3Stream.crc16(musicCRC, buffer)
            try output.append(UnsafeRawBufferPointer(buffer))
        }
        audioBytes += bytes.count
    }
}

/// One MP3 piece's LAME encoder (`PieceCodec`); the first writes the tag placeholder frame.
/// One owner of the `lame_global_flags` (`deinit` closes it).
final class LAMEPiece: PieceCodec {
    struct Encoded {
        var bytes: [UInt8]
        /// The frames in `bytes`, the tag placeholder first for the first piece.
        var frames: [Range<Int>]
        /// LAME's tag frame for a one-encoder stream of what the first piece saw: the template of the joined one.
        var tagTemplate: [UInt8]
    }

    let tagFrameBytes: Int
    private let lame: OpaquePointer
    private let channels: Int
    private let subject: String
    private var bytes: [UInt8] = []
    private var buffer = [UInt8](repeating: 0, count: 16 * 1024)

    init(format: AudioFormat, bitRate: Int, quality: Int, tag: Bool, subject: String) throws {
        lame = try LAME.makeEncoder(format: format, bitRate: bitRate, quality: quality, vbr: false, writeTag: tag, subject: subject)
        tagFrameBytes = tag ? LAME.tagFrameBytes(lame, vbr: false) : 0
        channels = format.channels
        self.subject = subject
    }

    deinit { lame_close(lame) }

    func encode(_ samples: UnsafeBufferPointer<Float>) throws {
        try LAME.encode(lame, samples, channels: channels, buffer: &buffer, subject: subject) { bytes.append(contentsOf: $0.prefix($1)) }
    }

    func finish() throws -> Encoded {
        try LAME.flush(lame, buffer: &buffer, subject: subject) { bytes.append(contentsOf: $0.prefix($1)) }
        return Encoded(
            bytes: bytes, frames: try MP3Stream.frames(in: bytes, subject: subject),
            tagTemplate: tagFrameBytes > 0 ? LAME.tagFrame(lame) : [])
    }
}
