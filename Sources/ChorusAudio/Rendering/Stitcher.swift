/// Lays messages end to end with exact gaps of digital silence, feeding the encoder and the
/// waveform generator in one pass. Counts every frame it writes, so the timeline is exact.
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

    init(encoder: any AudioEncoder, waveform: WaveformGenerator?, gapFrames: Int) {
        self.encoder = encoder
        self.waveform = waveform
        self.gapFrames = gapFrames
        channels = encoder.format.channels
    }

    /// Writes a gap (except before the first message), then `audio`. Returns the frames `audio` occupies.
    func append(_ audio: AudioBuffer) throws -> Range<Int> {
        if messagesWritten > 0 && gapFrames > 0 { try writeSilence(frames: gapFrames) }
        messagesWritten += 1
        let start = framesWritten
        starts.append(start)
        try audio.samples.withUnsafeBufferPointer { samples in
            let chunk = 65_536 * channels
            var offset = 0
            while offset < samples.count {
                let slice = UnsafeBufferPointer(rebasing: samples[offset..<min(samples.count, offset + chunk)])
                timings.measure(.stitch) { PCM16.quantize(slice, into: &pcm16) }
                try pcm16.withUnsafeBufferPointer { quantized in
                    try timings.measure(.encode) { try encoder.write(slice, pcm16: quantized) }
                    if let waveform { timings.measure(.waveform) { waveform.process(quantized) } }
                }
                offset += chunk
            }
        }
        framesWritten += audio.frameCount
        return start..<framesWritten
    }

    private func writeSilence(frames: Int) throws {
        if silence.count < frames * channels {
            silence = [Float](repeating: 0, count: frames * channels)
            silence16 = [Int16](repeating: 0, count: frames * channels)
        }
        try silence.withUnsafeBufferPointer { zeros in
            try silence16.withUnsafeBufferPointer { zeros16 in
                try timings.measure(.encode) {
                    try encoder.write(UnsafeBufferPointer(rebasing: zeros.prefix(frames * channels)),
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
        let chapters = ChapterMark.contiguous(titles: chapterTitles, starts: starts, total: framesWritten)
        try timings.measure(.encode) { try encoder.finish(chapters: chapters) }
        timings.add(.encode, encoder.otherThreadsSeconds)
        return waveform?.finish()
    }
}
