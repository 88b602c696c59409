import Dispatch

/// A lossy stream encoded by several encoders at once and joined into one stream that decodes to
/// exactly the samples given — same length, same timeline, digital silence where the input had it.
///
/// A conversation has 300 ms of digital silence between messages. The stream is cut inside such
/// silence at a point `q` on the codec's frame grid (`PieceJoiner.frameSize`) with at least
/// `margin` silent samples on both sides. Each piece gets its own encoder with the same settings,
/// starting at `q`; the piece before is flushed at `q` (the codec pads with zeros, which is what
/// follows anyway) and keeps exactly its first `(q − start) / frameSize` frames. Frame `k` of any piece
/// then stands where frame `k + start / frameSize` of a single encoder would, and across the cut the
/// decoder's overlap adds silence to silence. The joiner writes the frames in order and describes the
/// whole stream once (MP3: one LAME/Xing tag; AAC: one MP4 edit list), so the decoded length is exact.
///
/// Pieces are encoded on their own serial queues as their samples arrive, at most `jobs` pieces at
/// once, and written in order. Silence without a grid point `margin` samples from both its ends (shorter
/// than `2 × margin`, or up to one frame more: a `--gap-ms 20` conversation, a message without pauses) is
/// simply not cut: the stream is then one piece, as with one encoder. A piece's failure is reported at the
/// next `write`, not only when the piece is written.
///
/// A stream with no silence to cut in (speech over a music bed) is cut `.overlapped` instead: every
/// `minimumPieceSeconds` on the grid, the new piece's encoder warmed by the `overlap.before` frames before its cut
/// (kept here as they pass) and the piece before it given `overlap.after` frames past the cut; the joiner splices
/// them where both are warm (`PieceCutting.overlapped`). A stream that ends inside that overlap keeps its last
/// cut's piece out: the piece before it has all its samples.
final class ParallelEncoder<Joiner: PieceJoiner>: AudioEncoder {
    let format: AudioFormat
    private let joiner: Joiner
    private let jobs: Int
    private let cutting: PieceCutting
    private let minimumPieceFrames: Int
    /// Pieces not yet written, oldest first; the last one is the piece being fed.
    private var pieces: [EncoderPiece<Joiner.Codec>] = []
    /// Silent frames at the end of the input not yet given to a piece: where a cut may come.
    private var heldSilence = 0
    /// Frames given to pieces so far.
    private var given = 0
    /// Data chunks queued to pieces and not yet encoded, bounded so memory stays flat.
    private let queuedChunks = DispatchSemaphore(value: 8)
    private var finished = false
    /// Where the stream was cut (frames from the start, on the frame grid), in order.
    private(set) var cuts: [Int] = []
    /// CPU seconds of the pieces written so far.
    private(set) var otherThreadsSeconds = 0.0
    /// Overlapped cuts: the last `overlap.before` frames given (interleaved), to warm the next piece's encoder.
    private var history: [Float] = []
    /// Overlapped cuts: the piece before the last cut while it is given its frames past the cut, and how many are left.
    private var ending: EncoderPiece<Joiner.Codec>?
    private var endingLeft = 0

    /// - Parameters:
    ///   - jobs: pieces encoded at once (≥ 2 to be worth it; 1 still works, one piece after another).
    ///   - cutting: in silence only, or anywhere with overlapping pieces (a stream without silence).
    ///   - minimumPieceSeconds: no cut closer than this to the previous one (tests use small values to get many pieces);
    ///     overlapped pieces are at least twice their overlap long.
    init(joiner: Joiner, format: AudioFormat, jobs: Int, cutting: PieceCutting = .inSilence, minimumPieceSeconds: Double = 6) throws {
        self.format = format
        self.joiner = joiner
        self.jobs = max(1, jobs)
        self.cutting = cutting
        let overlapFrames = cutting == .overlapped ? 2 * (joiner.overlap.before + joiner.overlap.after) * joiner.frameSize : 0
        minimumPieceFrames = max(joiner.frameSize, overlapFrames, Int(minimumPieceSeconds * Double(format.sampleRate)))
        pieces = [try EncoderPiece(index: 0, start: 0, codec: joiner.makeCodec(index: 0, start: 0), channels: format.channels)]
    }

    func write(_ samples: UnsafeBufferPointer<Float>, pcm16: UnsafeBufferPointer<Int16>) throws {
        guard let base = samples.baseAddress else { return }
        if cutting == .overlapped {
            try writeOverlapped(samples)
            if let failure = pieces.lazy.compactMap(\.failure).first { throw failure }
            return try writeFinishedPieces(waiting: false)
        }
        let channels = format.channels
        let frames = samples.count / channels
        let margin = joiner.margin
        func silent(_ frame: Int) -> Bool {
            for channel in 0..<channels where base[frame * channels + channel] != 0 { return false }
            return true
        }
        var index = 0
        while index < frames {
            // Silence from `index`: held back until a sound ends it (it may hold a cut).
            var soundStart = index
            while soundStart < frames && silent(soundStart) { soundStart += 1 }
            heldSilence += soundStart - index
            if soundStart == frames { break }
            if heldSilence > 0 { try placeHeldSilence() }
            // Sound up to the next silence long enough to cut in, or to one that runs past this call.
            var soundEnd = soundStart
            scan: while soundEnd < frames {
                if silent(soundEnd) {
                    var run = soundEnd
                    while run < frames && silent(run) { run += 1 }
                    if run == frames || run - soundEnd >= 2 * margin { break scan }
                    soundEnd = run
                } else {
                    soundEnd += 1
                }
            }
            try give(UnsafeBufferPointer(start: base + soundStart * channels, count: (soundEnd - soundStart) * channels))
            index = soundEnd
        }
        if let failure = pieces.lazy.compactMap(\.failure).first { throw failure }
        try writeFinishedPieces(waiting: false)
    }

    func finish(chapters: [ChapterMark]) throws {
        guard !finished else { return }
        finished = true
        if heldSilence > 0 {
            current.encodeSilence(frames: heldSilence, queued: queuedChunks)
            given += heldSilence
            heldSilence = 0
        }
        if let ending {
            // The stream ended inside the last cut's overlap: the piece before it has every sample; the new one goes.
            let dropped = pieces.removeLast()
            dropped.finish(end: nil)
            cuts.removeLast()
            ending.finish(end: nil)
            self.ending = nil
        } else {
            current.finish(end: nil)
        }
        try writeFinishedPieces(waiting: true)
        try joiner.finish(samples: given, chapters: chapters)
    }

    private var current: EncoderPiece<Joiner.Codec> { pieces[pieces.count - 1] }

    /// The silence just ended by a sound: cut inside it if it is long enough and far enough from the last cut;
    /// otherwise it belongs to the current piece.
    private func placeHeldSilence() throws {
        defer { heldSilence = 0 }
        let frameSize = joiner.frameSize
        let silenceEnd = given + heldSilence
        // The grid point nearest the middle of the silence (farthest from the codec's ringing at the sounds on
        // either side), within the margins and no earlier than the minimum piece allows.
        let earliest = (max(given + joiner.margin, current.start + minimumPieceFrames) + frameSize - 1) / frameSize * frameSize
        let latest = (silenceEnd - joiner.margin) / frameSize * frameSize
        let middle = (given + silenceEnd) / 2 / frameSize * frameSize
        let cut = min(max(middle, earliest), latest)
        guard earliest <= latest else {
            current.encodeSilence(frames: heldSilence, queued: queuedChunks)
            given = silenceEnd
            return
        }
        let ending = current
        ending.encodeSilence(frames: cut - given, queued: queuedChunks)
        ending.finish(end: cut)
        cuts.append(cut)
        // At most `jobs` pieces at work: wait for the oldest (with one job, this one) before starting another.
        try writeFinishedPieces(waiting: pieces.count >= jobs)
        let next = try EncoderPiece(
            index: ending.index + 1, start: cut, codec: joiner.makeCodec(index: ending.index + 1, start: cut),
            channels: format.channels)
        pieces.append(next)
        next.encodeSilence(frames: silenceEnd - cut, queued: queuedChunks)
        given = silenceEnd
    }

    /// Overlapped cuts: gives `samples` to the current piece (and to the ending one while it has frames to go),
    /// cutting on the grid once the current piece is long enough.
    private func writeOverlapped(_ samples: UnsafeBufferPointer<Float>) throws {
        let channels = format.channels
        let frames = samples.count / channels
        let frameSize = joiner.frameSize
        var offset = 0
        while offset < frames {
            var take = frames - offset
            if ending != nil {
                take = min(take, endingLeft)
            } else {
                let earliest = max(current.start + minimumPieceFrames, joiner.overlap.before * frameSize)
                let cut = (earliest + frameSize - 1) / frameSize * frameSize
                if given == cut {
                    try startOverlappedPiece(at: cut)
                    continue
                }
                take = min(take, cut - given)
            }
            let chunk = Array(samples[(offset * channels)..<((offset + take) * channels)])
            current.encode(chunk, queued: queuedChunks)
            if let ending {
                ending.encode(chunk, queued: queuedChunks)
                endingLeft -= take
                if endingLeft == 0 {
                    ending.finish(end: current.start)
                    self.ending = nil
                }
            }
            history += chunk
            let kept = joiner.overlap.before * frameSize * channels
            if history.count > 2 * kept { history.removeFirst(history.count - kept) }
            given += take
            offset += take
        }
    }

    /// Starts a piece at `cut`, its encoder warmed by the frames before it; the current piece goes on past the cut.
    private func startOverlappedPiece(at cut: Int) throws {
        let previous = current
        cuts.append(cut)
        try writeFinishedPieces(waiting: pieces.count >= jobs)
        let warming = joiner.overlap.before * joiner.frameSize
        let next = try EncoderPiece(
            index: previous.index + 1, start: cut, encoderStart: cut - warming,
            codec: joiner.makeCodec(index: previous.index + 1, start: cut - warming), channels: format.channels)
        pieces.append(next)
        if warming > 0 { next.encode(Array(history.suffix(warming * format.channels)), queued: queuedChunks) }
        endingLeft = joiner.overlap.after * joiner.frameSize
        if endingLeft > 0 { ending = previous } else { previous.finish(end: cut) }
    }

    private func give(_ samples: UnsafeBufferPointer<Float>) throws {
        guard !samples.isEmpty else { return }
        current.encode(Array(samples), queued: queuedChunks)
        given += samples.count / format.channels
    }

    /// Writes the finished pieces at the head of the line, in order; with `waiting`, waits for the oldest
    /// (all of them once `finish` has been called).
    private func writeFinishedPieces(waiting: Bool) throws {
        var mustWait = waiting
        while let oldest = pieces.first, oldest.isFinishing {
            if mustWait { oldest.done.wait() } else if oldest.done.wait(timeout: .now()) == .timedOut { return }
            pieces.removeFirst()
            otherThreadsSeconds += oldest.cpuSeconds
            try joiner.append(oldest.result(), span: oldest.span)
            mustWait = finished
        }
    }
}
