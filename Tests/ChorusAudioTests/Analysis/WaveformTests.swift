import ChorusFixtures
import ChorusTestSupport
import Foundation
import Testing

@testable import ChorusAudio

@Suite("Waveform peaks (audiowaveform formats)")
struct WaveformTests {
    @Test("chorus waveform of a stereo 16-bit file averages channels like audiowaveform; .dat layout is exact")
    func fileAndDat() throws {
        let directory = try TemporaryDirectory()
        let format = AudioFormat(sampleRate: 22_050, channels: 2)
        var signal = SignalGenerator.speechLike(fundamental: 170, seconds: 2, format: format, seed: 5, amplitude: 0.8)
        for frame in 0..<signal.frameCount { signal.samples[frame * 2 + 1] *= -0.3 }
        let url = directory.file("stereo.wav")
        try ClipEncoding.wav16.write(signal, to: url)
        let wav = try WAVReference.read(url)
        let peaks = try WaveformPeaks.compute(fileAt: url, zoom: .samplesPerPixel(300))
        let expected = audiowaveformReference(wav.samples, channels: 2, samplesPerPixel: 300)
        #expect(peaks.values(bits: 16) == expected)

        let dat = peaks.datData(bits: 8)
        func int32(_ offset: Int) -> Int32 { dat.subdata(in: offset..<offset + 4).withUnsafeBytes { $0.load(as: Int32.self) } }
        #expect(int32(0) == 1 && int32(4) == 1 && int32(8) == 22_050 && int32(12) == 300)
        #expect(Int(int32(16)) == expected.count / 2)
        #expect(dat.count == 20 + expected.count)
        #expect(dat.dropFirst(20).map { Int(Int8(bitPattern: $0)) } == expected.map { $0 / 256 })
    }

    @Test(
        "the 16-bit read (no float round trip where the decoder gives 16-bit or mono float) equals the float read quantized",
        arguments: [(ClipEncoding.wav16, 1), (.wav16, 2), (.mp3, 1), (.mp3, 2), (.m4a, 2), (.wav24, 1), (.wavFloat, 2)])
    func sixteenBitRead(encoding: ClipEncoding, channels: Int) throws {
        let directory = try TemporaryDirectory()
        let format = AudioFormat(sampleRate: 44_100, channels: channels)
        let signal = SignalGenerator.speechLike(fundamental: 150, seconds: 1.5, format: format, seed: 8, amplitude: 0.7)
        let url = directory.file("clip")
        try encoding.write(signal, to: url)
        var floats: [Float] = []
        let floatFrames = try AudioFileReader(url: url).readToEnd { floats += $0 }
        var sixteen: [Int16] = []
        let sixteenFrames = try AudioFileReader(url: url).readToEnd16 { sixteen += $0 }
        #expect(sixteenFrames == floatFrames && sixteen.count == floats.count)
        #expect(sixteen == floats.map(PCM16.quantize), "\(encoding)")
        // And through a resampler (another rate), the same again.
        let other = AudioFormat(sampleRate: 16_000, channels: 1)
        var resampled: [Float] = []
        try AudioFileReader(url: url, outputFormat: other).readToEnd { resampled += $0 }
        var resampled16: [Int16] = []
        try AudioFileReader(url: url, outputFormat: other).readToEnd16 { resampled16 += $0 }
        #expect(resampled16 == resampled.map(PCM16.quantize))
    }

    @Test("PCM16.quantize rounds half away from zero, clamps, and maps NaN to 0, at every half step of the range")
    func quantizeEdges() {
        for step in -65_540...65_540 {
            let scaled = Float(step) / 2
            let expected: Int16 =
                scaled >= 32_766.5
                ? 32_767
                : scaled <= -32_767.5
                    ? -32_768
                    : Int16(scaled + (scaled < 0 ? -0.5 : 0.5))
            #expect(PCM16.quantize(scaled / 32_768) == expected, "\(scaled)")
        }
        #expect(PCM16.quantize(.nan) == 0 && PCM16.quantize(.infinity) == 32_767 && PCM16.quantize(-.infinity) == -32_768)
        #expect(PCM16.quantize(0.2999) == 9_827 && PCM16.quantize(-0.2999) == -9_827)
    }

    @Test("a zoom under 2 samples per pixel is refused")
    func minimumZoom() async {
        await expectAudioError(.invalidArgument, mentioning: ["pixels_per_second 30000", "minimum is 2"]) {
            _ = try WaveformZoom.pixelsPerSecond(30_000).samplesPerPixel(sampleRate: 44_100)
        }
    }
}
