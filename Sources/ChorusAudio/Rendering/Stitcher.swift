import Foundation

/// Lays messages end to end with exact gaps of digital silence, feeding the encoder and the
/// waveform generator in one pass. Counts every frame it writes, so the timeline is exact.
///
/// A negative gap starts a message before the previous one ends (an interruption): the end of each message that the
/// next will overlap is held back (`append`'s `holdBack`), the two are added where they overlap, and the sum is run
/// through the look-ahead `PeakLimiter` (the overlap and 200 ms after it, so its release ends inside the audio) at
/// `overlapCeiling` until its true peak is under it.
///
/// With a music bed (`BedMixer`), every frame written — messages, gaps, and a tail after the last message — has the
/// bed added; each message's span is announced to it before any frame near it is written, so its ducking looks ahead.
final class Stitcher {
    private let encoder: any AudioEncoder
    private let waveform: WaveformGenerator?
    private let gapFrames: Int
    private let channels: Int
    private var pcm16: [Int16] = []
    private var silence: [Float] = []
    private var silence16: [Int16] = []
    private(set) var framesWritten = 0
    private(set) var messagesWritten = 0
    /// Where each message starts, in frames.
    private(set) var starts: [Int] = []
    private(set) var timings = StageTimings()
    /// The ceiling, dBTP as `TruePeak.estimate` measures it, of two messages added where they overlap.
    private let overlapCeiling: Double
    /// The end of the last message, not written yet: the next message may overlap it (interleaved samples).
    private var held: [Float] = []
    /// The deepest gain reduction at an overlap so far, dB (≤ 0).
    private(set) var overlapLimiterDB = 0.0
    /// The music bed under everything written, if any.
    let bed: BedMixer?
    /// The deepest gain reduction where speech and bed together went over the ceiling, dB (≤ 0).
    private(set) var bedLimiterDB = 0.0
    private var mixed: [Float] = []
    /// The sample ceiling of speech and bed together, dBFS.
    private let bedCeiling: Double

    /// - Parameters:
    ///   - overlapCeiling: the true-peak ceiling of two messages added where they overlap, dBTP.
    ///   - bed: the music bed, if any.
    ///   - bedCeiling: the sample ceiling of speech and bed together, dBFS.
    init(
        encoder: any AudioEncoder, waveform: WaveformGenerator?, gapFrames: Int, overlapCeiling: Double = 0, bed: BedMixer? = nil,
        bedCeiling: Double = 0
    ) {
        self.bedCeiling = bedCeiling
        self.encoder = encoder
        self.waveform = waveform
        self.gapFrames = gapFrames
        self.overlapCeiling = overlapCeiling
        self.bed = bed
        channels = encoder.format.channels
    }

    /// Writes a gap (except before the first message), then `audio`. Returns the frames `audio` occupies.
    func append(_ audio: AudioBuffer) throws -> Range<Int> {
        try append(audio, gapFrames: gapFrames, holdBack: 0).placed
    }

    /// Places `audio` `gapFrames` after the end of the audio so far (nothing before the first message): silence when
    /// positive, an overlap when negative — at most what was held back (`overlap` says how much it was; a message
    /// shorter than its overlap is heard inside the one before). The last `holdBack` frames of what results are kept
    /// back for the next message to overlap.
    func append(_ audio: AudioBuffer, gapFrames: Int, holdBack: Int) throws -> (placed: Range<Int>, overlap: Int) {
        let heldFrames = held.count / channels
        let overlap = messagesWritten > 0 && gapFrames < 0 ? min(-gapFrames, heldFrames) : 0
        let silence = messagesWritten > 0 && gapFrames > 0 ? gapFrames : 0
        bed?.add(span: (framesWritten + heldFrames - overlap + silence)..<(framesWritten + heldFrames - overlap + silence + audio.frameCount))
        try write(held[..<((heldFrames - overlap) * channels)])
        var combined = Array(held[((heldFrames - overlap) * channels)...])
        held = []
        if silence > 0 { try writeSilence(frames: silence) }
        let start = framesWritten
        messagesWritten += 1
        starts.append(start)
        if overlap > 0 {
            timings.measure(.stitch) {
                let shared = min(combined.count, audio.samples.count)
                for index in 0..<shared { combined[index] += audio.samples[index] }
                if audio.samples.count > shared { combined += audio.samples[shared...] }
                let limited = min(combined.count / channels, min(overlap, audio.frameCount) + encoder.format.frames(milliseconds: 200))
                limitOverlap(&combined, frames: limited)
            }
        } else {
            combined = audio.samples
        }
        let keep = min(max(0, holdBack), combined.count / channels)
        try write(combined[..<(combined.count - keep * channels)])
        held = Array(combined[(combined.count - keep * channels)...])
        return (start..<(start + audio.frameCount), overlap)
    }

    /// Brings the first `frames` of `samples` (two messages added, then the later one alone) under `overlapCeiling`.
    private func limitOverlap(_ samples: inout [Float], frames: Int) {
        let format = encoder.format
        var ceilingDB = overlapCeiling - 0.3
        for _ in 0..<4 {
            let region = AudioBuffer(format: format, samples: Array(samples[..<(frames * channels)]))
            guard TruePeak.estimate(region) > overlapCeiling else { return }
            let limiter = PeakLimiter(format: format, ceiling: Float(pow(10, ceilingDB / 20)))
            let reduction = samples.withUnsafeMutableBufferPointer {
                limiter.process(UnsafeMutableBufferPointer(rebasing: $0[..<(frames * channels)]))
            }
            overlapLimiterDB = min(overlapLimiterDB, reduction)
            ceilingDB -= 0.5
        }
    }

    /// Writes interleaved `samples` to the encoder and the waveform.
    private func write(_ samples: ArraySlice<Float>) throws {
        guard !samples.isEmpty else { return }
        if bed != nil { return try writeMixed(frames: samples.count / channels, samples) }
        try samples.withUnsafeBufferPointer { samples in
            let chunk = 65_536 * channels
            var offset = 0
            while offset < samples.count {
                try emit(UnsafeBufferPointer(rebasing: samples[offset..<min(samples.count, offset + chunk)]))
                offset += chunk
            }
        }
        framesWritten += samples.count / channels
    }

    /// Quantizes `slice` once and hands it to the encoder and the waveform.
    private func emit(_ slice: UnsafeBufferPointer<Float>) throws {
        timings.measure(.stitch) { PCM16.quantize(slice, into: &pcm16) }
        try pcm16.withUnsafeBufferPointer { quantized in
            try timings.measure(.encode) { try encoder.write(slice, pcm16: quantized) }
            if let waveform { timings.measure(.waveform) { waveform.process(quantized) } }
        }
    }

    /// Writes `frames` of `samples` (silence when `nil`) with the bed added, chunk by chunk; a chunk that goes over the
    /// ceiling (speech and bed peaking together where the bed's first minute did not foresee it) is limited.
    private func writeMixed(frames: Int, _ samples: ArraySlice<Float>?) throws {
        guard let bed else { return }
        let chunk = 65_536
        let ceiling = Float(pow(10, bedCeiling / 20))
        var done = 0
        while done < frames {
            let count = min(chunk, frames - done)
            mixed.removeAll(keepingCapacity: true)
            if let samples {
                let first = samples.startIndex + done * channels
                mixed.append(contentsOf: samples[first..<(first + count * channels)])
            } else {
                mixed.append(contentsOf: repeatElement(0, count: count * channels))
            }
            try timings.measure(.stitch) {
                try bed.mix(into: &mixed, at: framesWritten)
                let peak = mixed.withUnsafeBufferPointer { PeakLimiter.blockPeaks($0, channels: channels).max() ?? 0 }
                if peak > ceiling {
                    let limiter = PeakLimiter(format: encoder.format, ceiling: ceiling * Float(pow(10, -0.3 / 20)))
                    bedLimiterDB = min(bedLimiterDB, mixed.withUnsafeMutableBufferPointer { limiter.process($0) })
                }
            }
            try mixed.withUnsafeBufferPointer { try emit($0) }
            framesWritten += count
            done += count
        }
    }

    private func writeSilence(frames: Int) throws {
        if bed != nil { return try writeMixed(frames: frames, nil) }
        if silence.count < frames * channels {
            silence = [Float](repeating: 0, count: frames * channels)
            silence16 = [Int16](repeating: 0, count: frames * channels)
        }
        try silence.withUnsafeBufferPointer { zeros in
            try silence16.withUnsafeBufferPointer { zeros16 in
                try timings.measure(.encode) {
                    try encoder.write(
                        UnsafeBufferPointer(rebasing: zeros.prefix(frames * channels)),
                        pcm16: UnsafeBufferPointer(rebasing: zeros16.prefix(frames * channels)))
                }
            }
        }
        waveform?.processSilence(frames: frames)
        framesWritten += frames
    }

    /// Finishes the encoder, marking a chapter per message with `chapterTitles` (contiguous:
    /// `ChapterMark.contiguous`); returns the waveform peaks if they were asked for.
    func finish(chapterTitles: [String] = []) throws -> WaveformPeaks? {
        try write(held[...])
        held = []
        // The tail, while the bed is heard (a bed that does not loop and has ended leaves none).
        if let bed, bed.endedAt.map({ $0 > framesWritten }) ?? true {
            bed.endProgram(at: framesWritten)
            try writeMixed(frames: bed.tailFrames, nil)
        }
        let chapters = ChapterMark.contiguous(titles: chapterTitles, starts: starts, total: framesWritten)
        try timings.measure(.encode) { try encoder.finish(chapters: chapters) }
        timings.add(.encode, encoder.otherThreadsSeconds)
        return waveform?.finish()
    }
}
