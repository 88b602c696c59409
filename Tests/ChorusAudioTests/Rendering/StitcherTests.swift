import ChorusFixtures
import Foundation
import Testing

@testable import ChorusAudio

@Suite("Stitcher")
struct StitcherTests {
    static let format = AudioFormat(sampleRate: 8_000, channels: 2)

    func clip(_ frames: Int, value: Float) -> AudioBuffer {
        AudioBuffer(format: Self.format, samples: [Float](repeating: value, count: frames * 2))
    }

    @Test("messages land in order with exactly gapFrames of digital silence between them, none before or after")
    func exactGapsInOrder() throws {
        let encoder = RecordingEncoder(format: Self.format)
        let stitcher = Stitcher(encoder: encoder, waveform: nil, gapFrames: 2_400)
        let placed = try [(100_000, Float(0.25)), (3, -0.5), (70_000, 0.75)].map { try stitcher.append(clip($0.0, value: $0.1)) }
        _ = try stitcher.finish()
        #expect(placed == [0..<100_000, 102_400..<102_403, 104_803..<174_803])
        #expect(stitcher.framesWritten == 174_803 && encoder.samples.count == 174_803 * 2)
        #expect(encoder.finished == 1)
        func frames(_ range: Range<Int>) -> ArraySlice<Float> { encoder.samples[(range.lowerBound * 2)..<(range.upperBound * 2)] }
        #expect(frames(placed[0]).allSatisfy { $0 == 0.25 })
        #expect(frames(100_000..<102_400).allSatisfy { $0 == 0 })
        #expect(frames(placed[1]).allSatisfy { $0 == -0.5 })
        #expect(frames(102_403..<104_803).allSatisfy { $0 == 0 })
        #expect(frames(placed[2]).allSatisfy { $0 == 0.75 })
        // The 16-bit copy the waveform and PCM formats see is the quantization of the same samples.
        #expect(encoder.pcm16[0] == PCM16.quantize(0.25) && encoder.pcm16[100_500 * 2] == 0)
    }

    @Test("a zero gap joins messages directly; an empty message takes no time")
    func zeroGapAndEmpty() throws {
        let encoder = RecordingEncoder(format: Self.format)
        let stitcher = Stitcher(encoder: encoder, waveform: nil, gapFrames: 0)
        #expect(try stitcher.append(clip(10, value: 0.1)) == 0..<10)
        #expect(try stitcher.append(clip(0, value: 0)) == 10..<10)
        #expect(try stitcher.append(clip(5, value: 0.2)) == 10..<15)
    }

    @Test("a message's own gap: longer, or negative to start inside the previous message's end, added sample by sample")
    func ownGapsAndOverlaps() throws {
        let encoder = RecordingEncoder(format: Self.format)
        let stitcher = Stitcher(encoder: encoder, waveform: nil, gapFrames: 100)
        // The first message's gap is not used; the next one overlaps it by 300 frames (held back), the third is
        // 50 frames after, the fourth (20 frames) sits inside the third's last 40, and the fifth reaches back further
        // than the fourth lasts: it starts where the audio so far began to be held.
        let first = try stitcher.append(clip(1_000, value: 0.25), gapFrames: 5_000, holdBack: 300)
        let second = try stitcher.append(clip(500, value: 0.125), gapFrames: -300, holdBack: 0)
        let third = try stitcher.append(clip(200, value: 0.1), gapFrames: 50, holdBack: 40)
        let fourth = try stitcher.append(clip(20, value: 0.2), gapFrames: -40, holdBack: 20)
        let fifth = try stitcher.append(clip(30, value: 0.05), gapFrames: -1_000, holdBack: 0)
        _ = try stitcher.finish()
        #expect(first.placed == 0..<1_000 && first.overlap == 0)
        #expect(second.placed == 700..<1_200 && second.overlap == 300)
        #expect(third.placed == 1_250..<1_450 && third.overlap == 0)
        #expect(fourth.placed == 1_410..<1_430 && fourth.overlap == 40)
        #expect(fifth.placed == 1_430..<1_460 && fifth.overlap == 20)
        #expect(stitcher.framesWritten == 1_460 && encoder.samples.count == 1_460 * 2)
        func frames(_ range: Range<Int>) -> ArraySlice<Float> { encoder.samples[(range.lowerBound * 2)..<(range.upperBound * 2)] }
        #expect(frames(0..<700).allSatisfy { $0 == 0.25 })
        #expect(frames(700..<1_000).allSatisfy { $0 == 0.375 })
        #expect(frames(1_000..<1_200).allSatisfy { $0 == 0.125 })
        #expect(frames(1_200..<1_250).allSatisfy { $0 == 0 })
        #expect(frames(1_250..<1_410).allSatisfy { $0 == 0.1 })
        #expect(frames(1_410..<1_430).allSatisfy { abs($0 - 0.3) < 1e-6 })
        #expect(frames(1_430..<1_450).allSatisfy { abs($0 - 0.15) < 1e-6 })
        #expect(frames(1_450..<1_460).allSatisfy { $0 == 0.05 })
        #expect(stitcher.overlapLimiterDB == 0)
    }

    @Test("two loud messages added where they overlap are limited to the ceiling there, and only around there")
    func overlapLimited() throws {
        let mono = AudioFormat(sampleRate: 48_000, channels: 1)
        let encoder = RecordingEncoder(format: mono)
        let stitcher = Stitcher(encoder: encoder, waveform: nil, gapFrames: 0, overlapCeiling: -1.15)
        func tone(_ frequency: Double) -> AudioBuffer {
            let step = 2 * Double.pi * frequency / 48_000
            return AudioBuffer(format: mono, samples: (0..<48_000).map { (index: Int) -> Float in Float(0.8 * sin(step * Double(index))) })
        }
        let a = tone(440)
        let b = tone(443)
        _ = try stitcher.append(a, gapFrames: 0, holdBack: 24_000)
        let placed = try stitcher.append(b, gapFrames: -24_000, holdBack: 0).placed
        _ = try stitcher.finish()
        #expect(placed == 24_000..<72_000)
        let output = encoder.samples
        // Before the overlap: the first message untouched; after it and its 200 ms: the second untouched.
        #expect(Array(output[0..<23_000]) == Array(a.samples[0..<23_000]))
        #expect(Array(output[(48_000 + 9_600 + 2_000)...]) == Array(b.samples[(24_000 + 9_600 + 2_000)...]))
        let overlap = AudioBuffer(format: mono, samples: Array(output[24_000..<48_000]))
        #expect(TruePeak.estimate(overlap) <= -1.15, "\(TruePeak.estimate(overlap)) dBTP")
        #expect(stitcher.overlapLimiterDB < -3)
        // The two tones beat: where they cancel the sum is left as it was (no pumping across the whole overlap).
        let quietest = stride(from: 24_000, to: 48_000, by: 480).map { start in output[start..<(start + 480)].map(abs).max()! }.min()!
        #expect(quietest < 0.3)
    }

    @Test("waveform peaks see the stitched signal, gaps included")
    func waveformFollows() throws {
        let mono = AudioFormat(sampleRate: 8_000, channels: 1)
        let stitcher = Stitcher(
            encoder: RecordingEncoder(format: mono),
            waveform: try WaveformGenerator(sampleRate: 8_000, channels: 1, zoom: .samplesPerPixel(100)),
            gapFrames: 200)
        _ = try stitcher.append(AudioBuffer(format: mono, samples: [Float](repeating: 0.5, count: 100)))
        _ = try stitcher.append(AudioBuffer(format: mono, samples: [Float](repeating: -0.5, count: 100)))
        let peaks = try #require(try stitcher.finish())
        #expect(peaks.data == [16_384, 16_384, 0, 0, 0, 0, -16_384, -16_384])
    }

    @Test("an encoder failure surfaces as the error it threw")
    func encoderFailure() throws {
        let encoder = RecordingEncoder(format: Self.format)
        encoder.failAfterFrames = 50
        let stitcher = Stitcher(encoder: encoder, waveform: nil, gapFrames: 10)
        _ = try stitcher.append(clip(40, value: 0.1))
        #expect(throws: AudioError.self) { _ = try stitcher.append(clip(40, value: 0.1)) }
    }
}
