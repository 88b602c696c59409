import ChorusFixtures
import ChorusTestSupport
import Foundation
import Testing
@testable import ChorusAudio

@Suite("Parallel MP3 encoding", .enabled(if: Referee.available, "needs ffmpeg as the referee decoder"))
struct ParallelMP3Tests {
    /// `messages` speech-like messages (5 ms fades, a faint hum so no stretch inside is digitally silent) with
    /// `gapMilliseconds` of digital silence between them. Returns the audio and the gaps.
    static func conversation(_ format: AudioFormat, messages: Int, gapMilliseconds: Int) -> (AudioBuffer, gaps: [Range<Int>]) {
        var samples: [Float] = []
        var gaps: [Range<Int>] = []
        let gap = format.frames(milliseconds: gapMilliseconds)
        for index in 0..<messages {
            if index > 0 {
                gaps.append((samples.count / format.channels)..<(samples.count / format.channels + gap))
                samples += [Float](repeating: 0, count: gap * format.channels)
            }
            var message = SignalGenerator.speechLike(fundamental: 110 + 35 * Double(index % 5), seconds: 0.7 + 0.15 * Double(index % 4),
                                                     format: format, seed: UInt64(index + 1), amplitude: 0.6)
            for frame in 0..<message.frameCount {
                for channel in 0..<format.channels {
                    message.samples[frame * format.channels + channel] = message.samples[frame * format.channels + channel]
                        * (channel == 0 ? 1 : 0.7) + Float(0.002 * sin(Double(frame) * 0.05 + Double(channel)))
                }
            }
            Fader(milliseconds: 5).apply(to: &message)
            samples += message.samples
        }
        return (AudioBuffer(format: format, samples: samples), gaps)
    }

    /// Encodes `audio` (fed 65,536 frames at a time, as the stitcher does) with one encoder (`jobs == nil`) or
    /// in pieces; returns the file and the cuts.
    static func encode(_ audio: AudioBuffer, jobs: Int?, minimumPieceSeconds: Double = 0, to url: URL) throws -> [Int] {
        let output = try EncodedOutput(file: url)
        let encoder: any AudioEncoder
        var parallel: ParallelMP3Encoder?
        if let jobs {
            parallel = try ParallelMP3Encoder(output: output, format: audio.format, bitRate: Self.bitRate(audio.format), jobs: jobs,
                                              minimumPieceSeconds: minimumPieceSeconds)
            encoder = parallel!
        } else {
            encoder = try MP3Encoder(output: output, format: audio.format, bitRate: Self.bitRate(audio.format))
        }
        try AudioFileWriter.encode(audio, with: encoder)
        try output.finish()
        return parallel?.cuts ?? []
    }

    static func bitRate(_ format: AudioFormat) -> Int { format.sampleRate >= 32_000 ? 128_000 : 64_000 }

    /// Root-mean-square and largest difference between two interleaved 16-bit signals over `frames`, in full scale.
    static func difference(_ a: [Int16], _ b: [Int16], frames: Range<Int>, channels: Int) -> (rms: Double, max: Double) {
        var sum = 0.0
        var largest = 0.0
        for index in (frames.lowerBound * channels)..<(frames.upperBound * channels) {
            let delta = Double(Int(a[index]) - Int(b[index])) / 32_768
            sum += delta * delta
            largest = max(largest, abs(delta))
        }
        return ((sum / Double(max(1, frames.count * channels))).squareRoot(), largest)
    }

    @Test("pieces join into one stream: exact length, exact gaps, digital silence at every splice, codec-level difference",
          arguments: [8_000, 11_025, 12_000, 16_000, 22_050, 24_000, 32_000, 44_100, 48_000], [1, 2])
    func exactAtEveryRate(rate: Int, channels: Int) throws {
        let format = AudioFormat(sampleRate: rate, channels: channels)
        let (audio, gaps) = Self.conversation(format, messages: 9, gapMilliseconds: 400)
        let directory = try TemporaryDirectory(prefix: "parallel-mp3")
        let input = audio.samples.map(PCM16.quantize)
        let serialURL = directory.file("serial.mp3")
        _ = try Self.encode(audio, jobs: nil, to: serialURL)
        let serial = try Referee.decodeS16(serialURL)
        #expect(serial.count == input.count, "one encoder: \(serial.count / channels) frames decoded of \(audio.frameCount)")
        let serialNoise = Self.difference(serial, input, frames: 0..<audio.frameCount, channels: channels)

        // 9 pieces (a cut in every gap), 2 pieces (the first cut past half the audio), 1 piece.
        let half = audio.duration / 2
        for (minimum, pieces) in [(0.0, 9), (half, 2), (audio.duration, 1)] {
            let url = directory.file("pieces-\(pieces).mp3")
            let cuts = try Self.encode(audio, jobs: 3, minimumPieceSeconds: minimum, to: url)
            let label = "\(rate) Hz, \(channels) ch, \(pieces) pieces"
            #expect(cuts.count == pieces - 1, "\(label): cut at \(cuts)")
            let decoded = try Referee.decodeS16(url)
            try #require(decoded.count == input.count, "\(label): ffmpeg decodes \(decoded.count / channels) frames of \(audio.frameCount)")
            let ours = try AudioFileReader(url: url, outputFormat: format).readAll()
            #expect(ours.frameCount == audio.frameCount, "\(label): Chorus decodes \(ours.frameCount) frames")
            let frameSize = MP3Stream.samplesPerFrame(sampleRate: rate)
            for cut in cuts {
                #expect(cut % frameSize == 0 && gaps.contains { $0.contains(cut - 1152) && $0.contains(cut + 1151) }, "\(label): cut \(cut)")
                let splice = (cut - 576) * channels..<(cut + 576) * channels
                #expect(decoded[splice].allSatisfy { $0 == 0 }, "\(label): not silent around the cut at \(cut)")
            }
            for gap in gaps where gap.count > 3_000 {
                let middle = (gap.lowerBound + 1_500) * channels..<(gap.upperBound - 1_500) * channels
                #expect(decoded[middle].allSatisfy { $0 == 0 }, "\(label): gap \(gap) not silent in the middle")
            }
            // Within the codec's own noise: no worse against the input than one encoder, give or take.
            let noise = Self.difference(decoded, input, frames: 0..<audio.frameCount, channels: channels)
            #expect(noise.rms <= serialNoise.rms * 1.25 + 1e-4, "\(label): \(noise.rms) RMS against the input, one encoder \(serialNoise.rms)")
        }
    }

    @Test("silence too short to cut in (20 ms gaps) leaves one piece, still exact")
    func shortGapsNoCut() throws {
        let format = AudioFormat(sampleRate: 44_100, channels: 1)
        let (audio, _) = Self.conversation(format, messages: 6, gapMilliseconds: 20)
        let directory = try TemporaryDirectory(prefix: "parallel-mp3")
        let url = directory.file("short.mp3")
        #expect(try Self.encode(audio, jobs: 2, to: url).isEmpty)
        #expect(try Referee.decodeS16(url).count == audio.frameCount)
    }

    @Test("the rewritten tag is LAME's own for a one-encoder stream: counts, padding, music and tag CRC")
    func tagMatchesLAME() throws {
        for format in [AudioFormat(sampleRate: 44_100, channels: 2), AudioFormat(sampleRate: 24_000, channels: 1)] {
            let (audio, _) = Self.conversation(format, messages: 3, gapMilliseconds: 300)
            let directory = try TemporaryDirectory(prefix: "parallel-mp3")
            let url = directory.file("serial.mp3")
            _ = try Self.encode(audio, jobs: nil, to: url)
            let bytes = [UInt8](try Data(contentsOf: url))
            let frames = try MP3Stream.frames(in: bytes, subject: "test")
            let lame = Array(bytes[frames[0]])
            let audioFrames = frames.dropFirst()
            let first = audioFrames.first!.lowerBound
            let crc = bytes.withUnsafeBufferPointer { MP3Stream.crc16(0, UnsafeBufferPointer(rebasing: $0[first...])) }
            let start = try #require(lame.firstRange(of: Array("Info".utf8))).lowerBound
            // Our CRC is LAME's: its tag CRC covers the frame up to the CRC field.
            #expect(lame.withUnsafeBufferPointer { MP3Stream.crc16(0, UnsafeBufferPointer(rebasing: $0[0..<(start + 154)])) }
                    == UInt16(lame[start + 154]) << 8 | UInt16(lame[start + 155]))
            // Spoil every field the rewrite owns (counts, seek table, padding, music length and CRC, tag CRC).
            var template = lame
            for index in Array((start + 8)..<(start + 116)) + Array((start + 148)..<(start + 156)) { template[index] = 0x5A }
            template[start + 142] &= 0xF0
            template[start + 143] = 0
            let rebuilt = try MP3Stream.lameTag(template: template, frameOffsets: audioFrames.map { $0.lowerBound - first },
                                                audioBytes: bytes.count - first,
                                                samplesPerFrame: MP3Stream.samplesPerFrame(sampleRate: format.sampleRate),
                                                samples: audio.frameCount, musicCRC: crc, subject: "test")
            // TOC entries may differ by a few 256ths (LAME estimates positions from bit rates; the rewrite counts bytes); everything else is identical.
            for index in 0..<lame.count where !((start + 16)..<(start + 116)).contains(index) && index != start + 154 && index != start + 155 {
                #expect(rebuilt[index] == lame[index], "\(format): byte \(index - start) of the tag: \(rebuilt[index]) vs LAME's \(lame[index])")
            }
            for index in (start + 16)..<(start + 116) { #expect(abs(Int(rebuilt[index]) - Int(lame[index])) <= 4) }
            if lame[(start + 16)..<(start + 116)] == rebuilt[(start + 16)..<(start + 116)] {
                #expect(rebuilt[(start + 154)..<(start + 156)] == lame[(start + 154)..<(start + 156)], "tag CRC")
            }
        }
    }
}
