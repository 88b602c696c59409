import ChorusFixtures
import ChorusTestSupport
import Foundation
import Testing

@testable import ChorusAudio

@Suite("Decoding every format phones and providers produce")
struct DecodingTests {
    static let cases: [(ClipEncoding, Int, Int)] = {
        var cases: [(ClipEncoding, Int, Int)] = []
        for encoding in ClipEncoding.allCases {
            let rates = encoding == .opus ? [8_000, 16_000, 24_000, 48_000] : [8_000, 16_000, 22_050, 24_000, 44_100, 48_000]
            for rate in rates {
                for channels in [1, 2] { cases.append((encoding, rate, channels)) }
            }
        }
        return cases
    }()

    @Test("a 440 Hz tone decodes with its rate, channels, length and pitch", arguments: cases)
    func decodesTone(encoding: ClipEncoding, rate: Int, channels: Int) throws {
        let directory = try TemporaryDirectory()
        let format = AudioFormat(sampleRate: rate, channels: channels)
        let tone = SignalGenerator.tone(frequency: 440, amplitude: 0.5, seconds: 1.5, format: format)
        let url = directory.file("tone.\(encoding.fileExtension)")
        try encoding.write(tone, to: url, bitRate: rate < 16_000 ? 32_000 : 64_000)

        let reader = try AudioFileReader(url: url)
        let decoded = try reader.readAll()
        let decodedRate = encoding.decodedSampleRate(encodedAt: rate)
        let expectedFrames = tone.frameCount * decodedRate / rate
        #expect(decoded.format == AudioFormat(sampleRate: decodedRate, channels: channels))
        if encoding.isSampleExact {
            #expect(decoded.frameCount == expectedFrames, "\(encoding) at \(rate) Hz should decode exactly")
        } else {
            #expect(abs(decoded.frameCount - expectedFrames) <= 2_400, "\(encoding): \(decoded.frameCount) vs \(expectedFrames)")
        }
        #expect(abs(zeroCrossingRate(decoded) - 880) < 20, "pitch of \(encoding)")
        if encoding == .wav16 || encoding == .flac || encoding == .aiff {
            let expected = tone.samples.map(PCM16.quantize)
            let got = decoded.samples.map(PCM16.quantize)
            #expect(got == expected, "16-bit lossless round trip must be bit exact")
        }
    }

    @Test("the container is detected from content, not from the file name")
    func ignoresExtension() throws {
        let directory = try TemporaryDirectory()
        let tone = SignalGenerator.tone(frequency: 300, amplitude: 0.4, seconds: 1, format: AudioFormat(sampleRate: 44_100, channels: 2))
        let url = directory.file("actually-aac.mp3")
        try ClipEncoding.m4a.write(tone, to: url)
        let reader = try AudioFileReader(url: url)
        #expect(reader.info.codec == "aac")
        #expect(try reader.readAll().frameCount == tone.frameCount)
    }

    @Test("encoded bytes in memory decode like a file")
    func decodesMemory() throws {
        let directory = try TemporaryDirectory()
        let tone = SignalGenerator.tone(frequency: 500, amplitude: 0.4, seconds: 0.8, format: AudioFormat(sampleRate: 24_000, channels: 1))
        let url = directory.file("tone.mp3")
        try ClipEncoding.mp3.write(tone, to: url)
        let data = try Data(contentsOf: url)
        let decoded = try AudioFileReader(data: data, name: "response", outputFormat: .speech).readAll()
        #expect(decoded.format == .speech)
        #expect(abs(decoded.frameCount - 35_280) <= 1)
    }

    @Test("bad inputs fail with an error naming the file and the reason")
    func badInputs() async throws {
        let directory = try TemporaryDirectory()
        let empty = try directory.write("", to: "empty.wav")
        await expectAudioError(.emptyAudio, mentioning: ["empty.wav", "empty"]) { _ = try AudioFileReader(url: empty) }

        var garbage = Data(count: 4096)
        var random = SplitMix(seed: 1)
        for index in garbage.indices { garbage[index] = UInt8(random.next() * 255) }
        let garbageURL = directory.file("garbage.wav")
        try garbage.write(to: garbageURL)
        await expectAudioError(.unsupportedFormat, mentioning: ["garbage.wav", "not a recognised audio file"]) {
            _ = try AudioFileReader(url: garbageURL).readAll()
        }

        let text = try directory.write(String(repeating: "Practice moved to 4:30, see you there.\n", count: 40), to: "notes.mp3")
        await expectAudioError(.unsupportedFormat, mentioning: ["notes.mp3"]) { _ = try AudioFileReader(url: text).readAll() }

        await expectAudioError(.fileNotFound, mentioning: ["missing.mp3", "no such file"]) {
            _ = try AudioFileReader(url: directory.file("missing.mp3"))
        }

        let tone = SignalGenerator.tone(frequency: 440, amplitude: 0.5, seconds: 4, format: AudioFormat(sampleRate: 44_100, channels: 1))
        let mp3 = directory.file("whole.mp3")
        try ClipEncoding.mp3.write(tone, to: mp3, bitRate: 128_000)
        let bytes = try Data(contentsOf: mp3)
        let truncated = directory.file("truncated.mp3")
        try bytes.prefix(bytes.count / 2).write(to: truncated)
        await expectAudioError(.truncated, mentioning: ["truncated.mp3", "truncated", "header declares"]) {
            _ = try AudioFileReader(url: truncated).readAll()
        }

        // A WAV header claiming 257 channels at 1,077,936,314 Hz (found by the decode fuzz target, which it
        // crashed: the reader reserved 79 GB for it) is refused, naming what it declares.
        var wav = Data("RIFF".utf8) + le32(36 + 800) + Data("WAVEfmt ".utf8) + le32(16)
        wav += le16(1) + le16(257) + le32(1_077_936_314) + le32(8_000) + le16(514) + le16(16)
        wav += Data("data".utf8) + le32(800) + Data(count: 800)
        await expectAudioError(.unsupportedFormat, mentioning: ["absurd.wav", "257 channels", "1077936314 Hz"]) {
            _ = try AudioFileReader(data: wav, name: "absurd.wav").readAll()
        }
    }

    @Test("a header declaring a huge chunk fails fast, without taking the memory it declares")
    func hugeDeclaredChunk() throws {
        // Found by the decode fuzz target: this WAV's LIST chunk claims 2.6 GB; FFmpeg's demuxer took 1.9 GB
        // before failing, until FFmpeg's largest single allocation was capped (FFmpeg.maxAllocation).
        let fuzzFolder = Repository.file("Fuzz/regressions/decode")
        let bytes = try Data(contentsOf: fuzzFolder.appendingPathComponent("wav-list-chunk-2600mb.wav").standardized)
        let before = Self.residentBytes()
        #expect(throws: AudioError.self) { _ = try AudioFileReader(data: bytes, name: "list.wav").readAll() }
        #expect(Self.residentBytes() - before < 512 << 20, "resident memory grew by \((Self.residentBytes() - before) >> 20) MB")
    }

    /// This process's resident memory (Linux: /proc/self/statm).
    static func residentBytes() -> Int {
        guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
        let pages = text.split(separator: " ").dropFirst().first.flatMap { Int($0) } ?? 0
        return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
    }

    private func le32(_ value: UInt32) -> Data { withUnsafeBytes(of: value.littleEndian) { Data($0) } }
    private func le16(_ value: UInt16) -> Data { withUnsafeBytes(of: value.littleEndian) { Data($0) } }
}

@Suite("Resampling")
struct ResamplingTests {
    @Test("n frames become round(n × out / in) frames, with no delay", arguments: [8_000, 16_000, 22_050, 24_000, 32_000, 48_000])
    func exactLength(inputRate: Int) throws {
        let input = AudioFormat(sampleRate: inputRate, channels: 1)
        // Silence, then a step at exactly 0.5 s: the step must land at 0.5 s in the output too.
        let signal = SignalGenerator.concatenate([
            SignalGenerator.silence(seconds: 0.5, format: input),
            SignalGenerator.tone(frequency: 200, amplitude: 0.8, seconds: 0.5, format: input),
        ])
        let resampler = try Resampler(from: input, to: .speech)
        var out: [Float] = []
        try signal.samples.withUnsafeBufferPointer { try resampler.convert($0, into: &out) }
        try resampler.flush(into: &out)
        let expected = Int((Double(signal.frameCount) * 44_100 / Double(inputRate)).rounded())
        #expect(abs(out.count - expected) <= 1, "\(out.count) vs \(expected)")
        let onset = out.firstIndex { abs($0) > 0.05 } ?? -1
        #expect(abs(onset - 22_050) <= 20, "onset at \(onset), expected about 22050")
    }

    @Test("stereo to mono averages the channels; mono to stereo copies")
    func channelMapping() throws {
        let stereo = AudioBuffer(
            format: AudioFormat(sampleRate: 44_100, channels: 2),
            samples: Array(repeating: [Float(0.6), Float(0.2)], count: 4_410).flatMap { $0 })
        let down = try Resampler(from: stereo.format, to: .speech)
        var mono: [Float] = []
        try stereo.samples.withUnsafeBufferPointer { try down.convert($0, into: &mono) }
        try down.flush(into: &mono)
        #expect(abs(mono[2_000] - 0.4) < 1e-4)

        let up = try Resampler(from: .speech, to: AudioFormat(sampleRate: 44_100, channels: 2))
        var both: [Float] = []
        let source = [Float](repeating: 0.3, count: 4_410)
        try source.withUnsafeBufferPointer { try up.convert($0, into: &both) }
        try up.flush(into: &both)
        #expect(abs(both[4_000] - 0.3) < 1e-4 && abs(both[4_001] - 0.3) < 1e-4)
    }
}
