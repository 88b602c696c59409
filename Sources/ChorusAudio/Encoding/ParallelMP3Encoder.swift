import CLame
import Dispatch

/// MP3 encoded by several LAME encoders at once, joined into one stream that decodes to exactly the
/// samples given — same length, same timeline, digital silence where the input had it.
///
/// A conversation has 300 ms of digital silence between messages. The stream is cut inside such
/// silence at a point `q` on the MP3 frame grid (a multiple of 1152 samples, 576 at 24 kHz and below)
/// with at least `margin` silent samples on both sides. Each piece gets its own encoder with the same
/// settings, starting at `q`; the piece before keeps exactly its first `(q − start) / frameSize` frames.
/// Frame `k` of any piece then decodes to the same samples `k` frames of a single encoder would, the
/// first frame of a fresh encoder never borrows from the bit reservoir, and across the cut the
/// decoder's overlap adds silence to silence. One LAME/Xing tag, rewritten for the joined stream
/// (`MP3Stream.lameTag`), tells decoders the delay and the padding, so the decoded length is exact.
///
/// Pieces are encoded on their own serial queues as their samples arrive, at most `jobs` pieces at
/// once, and written in order. Silence shorter than `2 × margin` (a `--gap-ms 20` conversation, a
/// message without pauses) is simply not cut: the stream is then one piece, as with `MP3Encoder`.
package final class ParallelMP3Encoder: AudioEncoder {
    package let format: AudioFormat
    private let output: EncodedOutput
    private let settings: Settings
    private let jobs: Int
    private let minimumPieceFrames: Int
    private let chapterTag: ID3ChapterTag?
    private let tagFrameBytes: Int
    /// Pieces not yet written, oldest first; the last one is the piece being fed.
    private var pieces: [Piece] = []
    /// Silent frames at the end of the input not yet given to a piece: where a cut may come.
    private var heldSilence = 0
    /// Frames given to pieces so far.
    private var given = 0
    /// Data chunks queued to pieces and not yet encoded, bounded so memory stays flat.
    private let queuedChunks = DispatchSemaphore(value: 8)
    private var written = Written()
    private var finished = false
    /// Where the stream was cut (frames from the start, on the frame grid), in order.
    package private(set) var cuts: [Int] = []
    /// CPU seconds of the pieces written so far.
    package private(set) var otherThreadsSeconds = 0.0

    /// 576 silent samples on each side of a cut kept the splice exact at the six rates tried (8–48 kHz, mono and
    /// stereo; 288 did not); twice that for a margin. `ParallelMP3Tests` checks all nine MPEG rates with it.
    package static let margin = 1152

    struct Settings: Sendable {
        var format: AudioFormat
        var bitRate: Int
        var quality: Int
        var subject: String
        var samplesPerFrame: Int { MP3Stream.samplesPerFrame(sampleRate: format.sampleRate) }
    }

    /// What has gone into the output: the audio frames' offsets (for the seek table) and their CRC.
    private struct Written {
        var frameOffsets: [Int] = []
        var audioBytes = 0
        var musicCRC: UInt16 = 0
        var tagTemplate: [UInt8] = []
    }

    /// - Parameters:
    ///   - jobs: pieces encoded at once (≥ 2 to be worth it; 1 still works, one piece after another).
    ///   - minimumPieceSeconds: no cut closer than this to the previous one (tests use small values to get many pieces).
    package init(output: EncodedOutput, format: AudioFormat, bitRate: Int, quality: Int = RenderOptions.defaultMP3Quality,
                 jobs: Int, minimumPieceSeconds: Double = 6, chapterTitles: [String] = []) throws {
        self.format = format
        self.output = output
        self.jobs = max(1, jobs)
        settings = Settings(format: format, bitRate: bitRate, quality: quality, subject: output.subject)
        minimumPieceFrames = max(settings.samplesPerFrame, Int(minimumPieceSeconds * Double(format.sampleRate)))
        let first = try Piece(index: 0, start: 0, settings: settings, tag: true)
        tagFrameBytes = first.tagFrameBytes
        pieces = [first]
        chapterTag = chapterTitles.isEmpty ? nil : try ID3ChapterTag(titles: chapterTitles)
        output.reservePlaceholder(bytes: (chapterTag?.size ?? 0) + tagFrameBytes)
        try chapterTag?.writePlaceholder(into: output)
    }

    package func write(_ samples: UnsafeBufferPointer<Float>, pcm16: UnsafeBufferPointer<Int16>) throws {
        guard let base = samples.baseAddress else { return }
        let channels = format.channels
        let frames = samples.count / channels
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
                    if run == frames || run - soundEnd >= 2 * Self.margin { break scan }
                    soundEnd = run
                } else {
                    soundEnd += 1
                }
            }
            try give(UnsafeBufferPointer(start: base + soundStart * channels, count: (soundEnd - soundStart) * channels))
            index = soundEnd
        }
        try writeFinishedPieces(waiting: false)
    }

    package func finish(chapters: [ChapterMark]) throws {
        guard !finished else { return }
        finished = true
        if heldSilence > 0 {
            current.encodeSilence(frames: heldSilence, queued: queuedChunks)
            given += heldSilence
            heldSilence = 0
        }
        current.finish(keepingFrames: nil)
        try writeFinishedPieces(waiting: true)
        try chapterTag?.write(chapters: chapters, sampleRate: format.sampleRate, into: output)
        guard tagFrameBytes > 0, !written.frameOffsets.isEmpty, written.tagTemplate.count == tagFrameBytes else { return }
        let tag = try MP3Stream.lameTag(template: written.tagTemplate, frameOffsets: written.frameOffsets,
                                        audioBytes: written.audioBytes, samplesPerFrame: settings.samplesPerFrame,
                                        samples: given, musicCRC: written.musicCRC, subject: output.subject)
        try tag.withUnsafeBytes { try output.overwrite($0, at: chapterTag?.size ?? 0) }
    }

    private var current: Piece { pieces[pieces.count - 1] }

    /// The silence just ended by a sound: cut inside it if it is long enough and far enough from the last cut;
    /// otherwise it belongs to the current piece.
    private func placeHeldSilence() throws {
        defer { heldSilence = 0 }
        let frameSize = settings.samplesPerFrame
        let silenceEnd = given + heldSilence
        // The grid point nearest the middle of the silence (farthest from the codec's ringing at the sounds on
        // either side), within the margins and no earlier than the minimum piece allows.
        let earliest = (max(given + Self.margin, current.start + minimumPieceFrames) + frameSize - 1) / frameSize * frameSize
        let latest = (silenceEnd - Self.margin) / frameSize * frameSize
        let middle = (given + silenceEnd) / 2 / frameSize * frameSize
        let cut = min(max(middle, earliest), latest)
        guard earliest <= latest else {
            current.encodeSilence(frames: heldSilence, queued: queuedChunks)
            given = silenceEnd
            return
        }
        let ending = current
        ending.encodeSilence(frames: cut - given, queued: queuedChunks)
        ending.finish(keepingFrames: (cut - ending.start) / frameSize)
        cuts.append(cut)
        // At most `jobs` pieces at work: wait for the oldest (with one job, this one) before starting another.
        try writeFinishedPieces(waiting: pieces.count >= jobs)
        let next = try Piece(index: ending.index + 1, start: cut, settings: settings, tag: false)
        pieces.append(next)
        next.encodeSilence(frames: silenceEnd - cut, queued: queuedChunks)
        given = silenceEnd
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
            try write(oldest)
            mustWait = finished
        }
    }

    private func write(_ piece: Piece) throws {
        otherThreadsSeconds += piece.cpuSeconds
        if let error = piece.error { throw error }
        var frames = piece.frames
        if piece.index == 0 && tagFrameBytes > 0 && !frames.isEmpty {
            // The first piece's first frame is LAME's placeholder for the tag: it goes out as the placeholder.
            guard let placeholder = frames.first, placeholder.count == tagFrameBytes else {
                throw AudioError(.encodingFailed, subject: output.subject, reason: "LAME wrote no tag placeholder of \(tagFrameBytes) bytes")
            }
            try piece.bytes.withUnsafeBytes { try output.append(UnsafeRawBufferPointer(rebasing: $0[placeholder])) }
            frames.removeFirst()
            written.tagTemplate = piece.tagTemplate
        }
        guard let first = frames.first, let last = frames.last else { return }
        for frame in frames { written.frameOffsets.append(written.audioBytes + frame.lowerBound - first.lowerBound) }
        try piece.bytes.withUnsafeBufferPointer { bytes in
            let audio = UnsafeBufferPointer(rebasing: bytes[first.lowerBound..<last.upperBound])
            written.musicCRC = MP3Stream.crc16(written.musicCRC, audio)
            try output.append(UnsafeRawBufferPointer(audio))
            written.audioBytes += audio.count
        }
    }
}

/// One stretch of the stream with its own LAME encoder, fed on its own serial queue. Everything but
/// `encode`/`encodeSilence`/`finish` (called by the owner, in order) happens on the queue; the owner
/// reads the results after `done`.
private final class Piece: @unchecked Sendable {
    let index: Int
    /// First frame of the stream this piece encodes (on the MP3 frame grid).
    let start: Int
    let tagFrameBytes: Int
    let done = DispatchSemaphore(value: 0)
    private(set) var isFinishing = false
    // Written on the queue before `done` is signalled; read by the owner after.
    private(set) var bytes: [UInt8] = []
    private(set) var frames: [Range<Int>] = []
    private(set) var tagTemplate: [UInt8] = []
    private(set) var error: (any Error)?
    private(set) var cpuSeconds = 0.0

    private let queue: DispatchQueue
    private let lame: OpaquePointer
    private let settings: ParallelMP3Encoder.Settings
    private var buffer = [UInt8](repeating: 0, count: 16 * 1024)
    private static let silence = [Float](repeating: 0, count: 8192 * 2)

    init(index: Int, start: Int, settings: ParallelMP3Encoder.Settings, tag: Bool) throws {
        self.index = index
        self.start = start
        self.settings = settings
        lame = try LAME.makeEncoder(format: settings.format, bitRate: settings.bitRate, quality: settings.quality, vbr: false,
                                    writeTag: tag, subject: settings.subject)
        tagFrameBytes = tag ? LAME.tagFrameBytes(lame, vbr: false) : 0
        queue = DispatchQueue(label: "chorus-mp3-piece-\(index)", qos: .userInitiated)
    }

    deinit { lame_close(lame) }

    func encode(_ samples: [Float], queued: DispatchSemaphore) {
        queued.wait()
        queue.async { [self] in
            defer { queued.signal() }
            samples.withUnsafeBufferPointer { run($0) }
        }
    }

    func encodeSilence(frames: Int, queued: DispatchSemaphore) {
        guard frames > 0 else { return }
        queued.wait()
        queue.async { [self] in
            defer { queued.signal() }
            let channels = settings.format.channels
            var left = frames
            Self.silence.withUnsafeBufferPointer { zeros in
                while left > 0 {
                    let count = min(left, zeros.count / channels)
                    run(UnsafeBufferPointer(rebasing: zeros[0..<(count * channels)]))
                    left -= count
                }
            }
        }
    }

    /// Flushes; keeps the first `keepingFrames` audio frames (all when nil, for the last piece) after
    /// the tag placeholder, if any.
    func finish(keepingFrames: Int?) {
        isFinishing = true
        queue.async { [self] in
            let started = MonotonicClock.threadCPU
            defer {
                cpuSeconds += MonotonicClock.threadCPU - started
                done.signal()
            }
            guard error == nil else { return }
            do {
                try LAME.flush(lame, buffer: &buffer, subject: settings.subject) { bytes.append(contentsOf: $0.prefix($1)) }
                var all = try MP3Stream.frames(in: bytes, subject: settings.subject)
                if tagFrameBytes > 0 { tagTemplate = LAME.tagFrame(lame) }
                let placeholder = tagFrameBytes > 0 ? 1 : 0
                if let keepingFrames {
                    guard all.count >= placeholder + keepingFrames else {
                        throw AudioError(.encodingFailed, subject: settings.subject,
                                         reason: "piece \(index) has \(all.count - placeholder) frames, fewer than the \(keepingFrames) it covers")
                    }
                    all = Array(all.prefix(placeholder + keepingFrames))
                }
                frames = all
            } catch {
                self.error = error
            }
        }
    }

    private func run(_ samples: UnsafeBufferPointer<Float>) {
        guard error == nil else { return }
        let started = MonotonicClock.threadCPU
        defer { cpuSeconds += MonotonicClock.threadCPU - started }
        do {
            try LAME.encode(lame, samples, channels: settings.format.channels, buffer: &buffer, subject: settings.subject) {
                bytes.append(contentsOf: $0.prefix($1))
            }
        } catch {
            self.error = error
        }
    }
}
