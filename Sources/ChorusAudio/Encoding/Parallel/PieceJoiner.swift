/// One piece's encoder for `ParallelEncoder`: a fresh encoder with the joined stream's settings,
/// starting at a point on the format's frame grid. It is used on one serial queue (a codec's state
/// stays with one thread of work at a time).
protocol PieceCodec: AnyObject, SendableMetatype {
    associatedtype Encoded
    /// Encodes interleaved samples.
    func encode(_ samples: UnsafeBufferPointer<Float>) throws
    /// Flushes and returns the piece's part of the stream: its first `keepingFrames` codec frames, or all of
    /// them for the last piece (`nil`). MP3: audio frames, after the tag placeholder frame the first piece puts
    /// before them; AAC: packets, the piece's priming packet first.
    func finish(keepingFrames: Int?) throws -> Encoded
}

/// How a format is encoded in pieces and joined into one stream: its frame grid, the silence a cut
/// needs, the pieces' encoders, and the writer of their frames, in order (`MP3Joiner`, `AACJoiner`).
protocol PieceJoiner: AnyObject {
    associatedtype Codec: PieceCodec
    /// Samples per codec frame: cuts lie on its multiples.
    var frameSize: Int { get }
    /// Silent samples needed on each side of a cut for the splice to decode to exact silence.
    var margin: Int { get }
    /// A fresh encoder for piece `index`, which starts `start` samples into the stream; called in order,
    /// piece 0 from `ParallelEncoder.init`.
    func makeCodec(index: Int, start: Int) throws -> Codec
    /// Appends piece `index`'s part, which starts `start` samples into the stream (in order, each once).
    func append(_ encoded: Codec.Encoded, index: Int, start: Int) throws
    /// Completes the stream, `samples` frames long in all, with `chapters` where the format has them.
    func finish(samples: Int, chapters: [ChapterMark]) throws
}
