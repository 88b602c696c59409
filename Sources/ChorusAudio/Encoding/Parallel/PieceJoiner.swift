/// One piece's encoder for `ParallelEncoder`: a fresh encoder with the joined stream's settings,
/// starting at a point on the format's frame grid. It is used on one serial queue (a codec's state
/// stays with one thread of work at a time).
protocol PieceCodec: AnyObject, SendableMetatype {
    associatedtype Encoded
    /// Encodes interleaved samples.
    func encode(_ samples: UnsafeBufferPointer<Float>) throws
    /// Flushes and returns everything the encoder wrote (MP3: its frames, the first piece's tag placeholder frame
    /// first; AAC: its packets, the priming packet first). The joiner keeps what belongs to the piece's span.
    func finish() throws -> Encoded
}

/// Where a piece lies in the joined stream, in samples (per channel) from its start, all on the frame grid.
struct PieceSpan: Equatable {
    var index: Int
    /// Where the piece's encoder started: `start`, or earlier by the pre-roll of an overlapped cut.
    var encoderStart: Int
    /// The piece's part of the stream begins here (the cut before it; 0 for the first piece).
    var start: Int
    /// The next piece's `start`; nil for the last piece.
    var end: Int?
}

/// How `ParallelEncoder` cuts a stream.
enum PieceCutting {
    /// Only inside digital silence at least `margin` samples from sound on both sides: each piece's encoder
    /// starts at its cut and the piece before is flushed there (the codec pads with the zeros that follow anyway).
    /// Splices decode to exact silence.
    case inSilence
    /// Anywhere on the grid (a music bed leaves no silence): a piece's encoder starts `overlap.before` frames
    /// early and is warmed by the stream's samples, the piece before it is given `overlap.after` frames past the
    /// cut, and the joiner splices the two where both encoders are warm, dropping the rest. The splice is within
    /// the codec's own noise, not exact.
    case overlapped
}

/// The codec frames an overlapped cut costs (`PieceCutting.overlapped`).
struct PieceOverlap {
    /// Frames a piece's encoder is given before its start, discarded.
    var before: Int
    /// Frames the piece before a cut is given after it; the joiner may splice up to a few frames past the cut.
    var after: Int
}

/// How a format is encoded in pieces and joined into one stream: its frame grid, what a cut needs, the
/// pieces' encoders, and the writer of their frames, in order (`MP3Joiner`, `AACJoiner`).
protocol PieceJoiner: AnyObject {
    associatedtype Codec: PieceCodec
    /// Samples per codec frame: cuts lie on its multiples.
    var frameSize: Int { get }
    /// Silent samples needed on each side of a cut in silence for the splice to decode to exact silence.
    var margin: Int { get }
    /// Frames an overlapped cut warms the next piece's encoder with, and gives the piece before it past the cut.
    var overlap: PieceOverlap { get }
    /// A fresh encoder for piece `index`, which starts encoding `start` samples into the stream; called in
    /// order, piece 0 from `ParallelEncoder.init` (a piece may be made and then dropped, never appended).
    func makeCodec(index: Int, start: Int) throws -> Codec
    /// Appends what piece `span.index` encoded (in order, each once).
    func append(_ encoded: Codec.Encoded, span: PieceSpan) throws
    /// Completes the stream, `samples` frames long in all, with `chapters` where the format has them.
    func finish(samples: Int, chapters: [ChapterMark]) throws
}
