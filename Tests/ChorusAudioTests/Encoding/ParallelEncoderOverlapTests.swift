import ChorusFixtures
import ChorusTestSupport
import Foundation
import Testing

@testable import ChorusAudio

/// Streams without digital silence (speech over a music bed) encoded in overlapping pieces, against one encoder.
@Suite("Parallel MP3 and AAC encoding without silence (overlapped pieces)", .enabled(if: Referee.available, "needs ffmpeg as the referee decoder"))
struct ParallelEncoderOverlapTests {
    /// Nine speech-like messages with 400 ms gaps, a bed under all of it (two tones, slowly swelling, and faint noise):
    /// no sample anywhere is digitally silent.
    static func bedConversation(_ format: AudioFormat) -> AudioBuffer {
        var (audio, _) = ParallelEncoderTests.conversation(format, messages: 9, gapMilliseconds: 400)
        var seed: UInt64 = 0x9E37_79B9_7F4A_7C15
        let rate = Double(format.sampleRate)
        for frame in 0..<audio.frameCount {
            let time = Double(frame) / rate
            for channel in 0..<format.channels {
                seed = seed &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
                let noise = Double(Int64(bitPattern: seed) >> 40) / Double(1 << 23) * 0.004
                let bed =
                    0.08 * sin(2 * .pi * 220 * time) * (0.6 + 0.4 * sin(2 * .pi * 0.5 * time))
                    + 0.05 * sin(2 * .pi * 330 * time + Double(channel)) + noise
                audio.samples[frame * format.channels + channel] = Float(Double(audio.samples[frame * format.channels + channel]) * 0.8 + bed)
            }
        }
        return audio
    }

    struct Encoded {
        var cuts: [Int]
        var splices: [(frame: Int, borrowed: Int, widened: Bool)]
    }

    /// Encodes `audio` in overlapped pieces as short as the overlap allows (or with one encoder, `jobs == nil`) into `url`.
    static func encode(_ audio: AudioBuffer, jobs: Int?, spliceRule: MP3Joiner.SpliceRule = .firstFitting, to url: URL) throws -> Encoded {
        guard let jobs else { return Encoded(cuts: try ParallelEncoderTests.encode(audio, jobs: nil, to: url), splices: []) }
        let output = try EncodedOutput(file: url)
        let bitRate = ParallelEncoderTests.bitRate(audio.format)
        var result = Encoded(cuts: [], splices: [])
        if url.pathExtension == "mp3" {
            let joiner = try MP3Joiner(
                output: output, format: audio.format, bitRate: bitRate, quality: RenderOptions.defaultMP3Quality,
                chapterTitles: [], spliceRule: spliceRule)
            let encoder = try ParallelEncoder(joiner: joiner, format: audio.format, jobs: jobs, cutting: .overlapped, minimumPieceSeconds: 0)
            try AudioFileWriter.encode(audio, with: encoder)
            result = Encoded(cuts: encoder.cuts, splices: joiner.splices)
        } else {
            let joiner = try AACJoiner(output: output, format: audio.format, bitRate: bitRate, chapterTitles: [])
            let encoder = try ParallelEncoder(joiner: joiner, format: audio.format, jobs: jobs, cutting: .overlapped, minimumPieceSeconds: 0)
            try AudioFileWriter.encode(audio, with: encoder)
            result = Encoded(cuts: encoder.cuts, splices: encoder.cuts.map { ($0 / 1024, 0, false) })
        }
        try output.finish()
        return result
    }

    /// What one splice adds: RMS against the input over the 3 frames before the splice and the one after it, in
    /// pieces and with one encoder.
    struct SpliceNoise: CustomStringConvertible {
        var frame: Int
        var pieces: Double
        var serial: Double
        var description: String { String(format: "frame %d: %.5f vs %.5f", frame, pieces, serial) }
    }

    static func spliceNoise(decoded: [Int16], serial: [Int16], input: [Int16], splices: [Int], frameSize: Int, channels: Int) -> [SpliceNoise] {
        let frames = input.count / channels
        return splices.map { frame in
            let window = max(0, (frame - 3) * frameSize)..<min(frames, (frame + 1) * frameSize)
            return SpliceNoise(
                frame: frame, pieces: ParallelEncoderTests.difference(decoded, input, frames: window, channels: channels).rms,
                serial: ParallelEncoderTests.difference(serial, input, frames: window, channels: channels).rms)
        }
    }

    /// Every MP3 rate, mono and stereo alternating: each MPEG version (1, 2, 2.5: their frame and reservoir sizes)
    /// in both of its side-information layouts.
    @Test(
        "MP3 in overlapped pieces: exact length, splices carrying the bit reservoir, noise at every splice at one encoder's level",
        arguments: [(8_000, 1), (11_025, 2), (12_000, 1), (16_000, 2), (22_050, 1), (24_000, 2), (32_000, 1), (44_100, 2), (48_000, 1)])
    func mp3(rate: Int, channels: Int) throws {
        try Self.check("mp3", AudioFormat(sampleRate: rate, channels: channels), frameSize: MP3Stream.samplesPerFrame(sampleRate: rate))
    }

    /// Only the length: FFmpeg's AAC rate control leaves fresh pieces noisier than one encoder (`AACJoiner.overlap`),
    /// which is why renders with a bed keep one AAC encoder.
    @Test(
        "AAC in overlapped pieces: exact length (renders keep one AAC encoder under a bed: its rate control)",
        arguments: [(8_000, 1), (44_100, 2), (96_000, 1)])
    func aac(rate: Int, channels: Int) throws {
        try Self.check("m4a", AudioFormat(sampleRate: rate, channels: channels), frameSize: 1024)
    }

    static func check(_ fileExtension: String, _ format: AudioFormat, frameSize: Int) throws {
        let audio = Self.bedConversation(format)
        let channels = format.channels
        let label = "\(fileExtension) \(format.sampleRate) Hz, \(channels) ch"
        let directory = try TemporaryDirectory(prefix: "overlap-\(fileExtension)")
        let input = audio.samples.map(PCM16.quantize)
        #expect(audio.samples.allSatisfy { $0 != 0 }, "the test signal has digital silence")
        let serialURL = directory.file("serial.\(fileExtension)")
        _ = try Self.encode(audio, jobs: nil, to: serialURL)
        let serial = try Referee.decodeS16Exact(serialURL, channels: channels)
        try #require(serial.count == input.count)
        let url = directory.file("pieces.\(fileExtension)")
        let encoded = try Self.encode(audio, jobs: 2, to: url)
        #expect(!encoded.cuts.isEmpty, "\(label): no cut in \(audio.frameCount) frames")
        let decoded = try Referee.decodeS16Exact(url, channels: channels)
        try #require(decoded.count == input.count, "\(label): ffmpeg decodes \(decoded.count / channels) frames of \(audio.frameCount)")
        #expect(try AudioFileReader(url: url, outputFormat: format).readAll().frameCount == audio.frameCount, "\(label): Chorus's length")
        guard fileExtension == "mp3" else { return }
        let whole = ParallelEncoderTests.difference(decoded, input, frames: 0..<audio.frameCount, channels: channels)
        let serialWhole = ParallelEncoderTests.difference(serial, input, frames: 0..<audio.frameCount, channels: channels)
        #expect(whole.rms <= serialWhole.rms * 1.1 + 1e-4, "\(label): \(whole.rms) RMS against the input, one encoder \(serialWhole.rms)")
        let noise = Self.spliceNoise(
            decoded: decoded, serial: serial, input: input, splices: encoded.splices.map(\.frame),
            frameSize: frameSize, channels: channels)
        for splice in noise {
            #expect(splice.pieces <= splice.serial * 1.5 + 2e-4, "\(label): splice at \(splice); all \(noise)")
        }
        // The reservoir is in use under a bed: splices carry borrowed main data across.
        #expect(encoded.splices.contains { $0.borrowed > 0 }, "\(label): \(encoded.splices)")
    }

    @Test("MP3 splices without the borrowed main data are measurably wrong: the splice check can fail")
    func mp3BorrowedDataMatters() throws {
        let format = AudioFormat(sampleRate: 44_100, channels: 2)
        let audio = Self.bedConversation(format)
        let directory = try TemporaryDirectory(prefix: "overlap-mp3")
        let input = audio.samples.map(PCM16.quantize)
        _ = try Self.encode(audio, jobs: nil, to: directory.file("serial.mp3"))
        let serial = try Referee.decodeS16Exact(directory.file("serial.mp3"), channels: 2)
        let encoded = try Self.encode(audio, jobs: 2, spliceRule: .withoutBorrowedData, to: directory.file("broken.mp3"))
        let decoded = try Referee.decodeS16Exact(directory.file("broken.mp3"), channels: 2)
        #expect(decoded.count == input.count)
        let noise = Self.spliceNoise(
            decoded: decoded, serial: serial, input: input, splices: encoded.splices.filter { $0.borrowed > 0 }.map(\.frame),
            frameSize: 1152, channels: 2)
        try #require(!noise.isEmpty)
        #expect(noise.contains { $0.pieces > $0.serial * 1.5 + 2e-4 }, "\(noise)")
    }

    @Test(
        "MP3 splices at the cut with the frame before widened (the fallback when the reservoir does not fit): still exact in length, within the codec's noise",
        arguments: [(44_100, 2), (22_050, 1)])
    func mp3Widened(rate: Int, channels: Int) throws {
        let format = AudioFormat(sampleRate: rate, channels: channels)
        let frameSize = MP3Stream.samplesPerFrame(sampleRate: rate)
        let audio = Self.bedConversation(format)
        let directory = try TemporaryDirectory(prefix: "overlap-mp3")
        let input = audio.samples.map(PCM16.quantize)
        _ = try Self.encode(audio, jobs: nil, to: directory.file("serial.mp3"))
        let serial = try Referee.decodeS16Exact(directory.file("serial.mp3"), channels: channels)
        let encoded = try Self.encode(audio, jobs: 2, spliceRule: .atCutWidening, to: directory.file("widened.mp3"))
        #expect(encoded.splices.map(\.frame) == encoded.cuts.map { $0 / frameSize })
        #expect(encoded.splices.allSatisfy { $0.widened }, "\(encoded.splices)")
        let decoded = try Referee.decodeS16Exact(directory.file("widened.mp3"), channels: channels)
        try #require(decoded.count == input.count)
        for splice in Self.spliceNoise(
            decoded: decoded, serial: serial, input: input, splices: encoded.splices.map(\.frame),
            frameSize: frameSize, channels: channels)
        {
            #expect(splice.pieces <= splice.serial * 1.5 + 2e-4, "\(splice)")
        }
    }
}
