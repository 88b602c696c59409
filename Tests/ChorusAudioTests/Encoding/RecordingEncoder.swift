@testable import ChorusAudio

/// An encoder double that keeps every sample it is given, in order, and counts its calls.
final class RecordingEncoder: AudioEncoder {
    let format: AudioFormat
    private(set) var samples: [Float] = []
    private(set) var pcm16: [Int16] = []
    private(set) var finished = 0
    /// Fail on the write that would take the total past this many frames.
    var failAfterFrames: Int?

    init(format: AudioFormat) { self.format = format }

    func write(_ samples: UnsafeBufferPointer<Float>, pcm16: UnsafeBufferPointer<Int16>) throws {
        if let failAfterFrames, (self.samples.count + samples.count) / format.channels > failAfterFrames {
            throw AudioError(.writeFailed, subject: "recording", reason: "disk full (simulated)")
        }
        self.samples += samples
        self.pcm16 += pcm16
    }

    func finish(chapters: [ChapterMark]) throws { finished += 1 }
}
