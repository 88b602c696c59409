import CLame

/// MP3 in pieces (`ParallelEncoder<MP3Joiner>`): LAME encoders of identical settings on the MP3 frame
/// grid (1152 samples, 576 at 24 kHz and below), their frames written back to back after one LAME/Xing
/// tag rewritten for the joined stream (`MP3Stream.lameTag`: frame and byte counts, seek table, delay
/// and padding, music CRC), and the ID3 chapter tag in front when there are chapters.
final class MP3Joiner: PieceJoiner {
    let frameSize: Int
    /// 576 silent samples on each side of a cut kept the splice exact at the six rates tried (8–48 kHz, mono and
    /// stereo; 288 did not); twice that for a margin. `ParallelEncoderTests` checks all nine MPEG rates with it.
    static let defaultMargin = 1152
    var margin: Int { Self.defaultMargin }
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

    init(output: EncodedOutput, format: AudioFormat, bitRate: Int, quality: Int, chapterTitles: [String], growingTitles: Int = 0) throws {
        self.output = output
        self.format = format
        self.bitRate = bitRate
        self.quality = quality
        frameSize = MP3Stream.samplesPerFrame(sampleRate: format.sampleRate)
        chapterTag = chapterTitles.isEmpty ? nil : try ID3ChapterTag(titles: chapterTitles, growing: growingTitles)
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

    func append(_ piece: LAMEPiece.Encoded, index: Int, start: Int) throws {
        var frames = piece.frames
        if index == 0 && tagFrameBytes > 0 && !frames.isEmpty {
            // The first piece's first frame is LAME's placeholder for the tag: it goes out as the placeholder.
            guard let placeholder = frames.first, placeholder.count == tagFrameBytes else {
                throw AudioError(.encodingFailed, subject: output.subject, reason: "LAME wrote no tag placeholder of \(tagFrameBytes) bytes")
            }
            try piece.bytes.withUnsafeBytes { try output.append(UnsafeRawBufferPointer(rebasing: $0[placeholder])) }
            frames.removeFirst()
            tagTemplate = piece.tagTemplate
        }
        guard let first = frames.first, let last = frames.last else { return }
        for frame in frames { frameOffsets.append(audioBytes + frame.lowerBound - first.lowerBound) }
        try piece.bytes.withUnsafeBufferPointer { bytes in
            let audio = UnsafeBufferPointer(rebasing: bytes[first.lowerBound..<last.upperBound])
            musicCRC = MP3Stream.crc16(musicCRC, audio)
            try output.append(UnsafeRawBufferPointer(audio))
            audioBytes += audio.count
        }
    }

    func finish(samples: Int, chapters: [ChapterMark]) throws {
        try chapterTag?.write(chapters: chapters, sampleRate: format.sampleRate, into: output)
        guard tagFrameBytes > 0, !frameOffsets.isEmpty, tagTemplate.count == tagFrameBytes else { return }
        let tag = try MP3Stream.lameTag(template: tagTemplate, frameOffsets: frameOffsets, audioBytes: audioBytes,
                                        samplesPerFrame: frameSize, samples: samples, musicCRC: musicCRC, subject: output.subject)
        try tag.withUnsafeBytes { try output.overwrite($0, at: chapterTag?.size ?? 0) }
    }
}

/// One MP3 piece's LAME encoder (`PieceCodec`); the first writes the tag placeholder frame.
/// One owner of the `lame_global_flags` (`deinit` closes it).
final class LAMEPiece: PieceCodec {
    struct Encoded {
        var bytes: [UInt8]
        /// The kept frames in `bytes`, the tag placeholder first for the first piece.
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

    func finish(keepingFrames: Int?) throws -> Encoded {
        try LAME.flush(lame, buffer: &buffer, subject: subject) { bytes.append(contentsOf: $0.prefix($1)) }
        var frames = try MP3Stream.frames(in: bytes, subject: subject)
        let placeholder = tagFrameBytes > 0 ? 1 : 0
        if let keepingFrames {
            guard frames.count >= placeholder + keepingFrames else {
                throw AudioError(.encodingFailed, subject: subject,
                                 reason: "an MP3 piece has \(frames.count - placeholder) frames, fewer than the \(keepingFrames) it covers")
            }
            frames = Array(frames.prefix(placeholder + keepingFrames))
        }
        return Encoded(bytes: bytes, frames: frames, tagTemplate: tagFrameBytes > 0 ? LAME.tagFrame(lame) : [])
    }
}
