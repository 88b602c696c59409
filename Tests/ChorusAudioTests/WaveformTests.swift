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

    @Test("a zoom under 2 samples per pixel is refused")
    func minimumZoom() async {
        await expectAudioError(.invalidArgument, mentioning: ["pixels_per_second 30000", "minimum is 2"]) {
            _ = try WaveformZoom.pixelsPerSecond(30_000).samplesPerPixel(sampleRate: 44_100)
        }
    }
}
