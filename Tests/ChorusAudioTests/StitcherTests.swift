import ChorusFixtures
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

    @Test("waveform peaks see the stitched signal, gaps included")
    func waveformFollows() throws {
        let mono = AudioFormat(sampleRate: 8_000, channels: 1)
        let stitcher = Stitcher(encoder: RecordingEncoder(format: mono),
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
