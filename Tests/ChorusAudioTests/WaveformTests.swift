import Foundation
import Testing
@testable import ChorusAudio

@Suite("Waveform peaks (audiowaveform formats)")
struct WaveformTests {
    /// audiowaveform's algorithm, written out plainly: average channels (C integer division),
    /// min/max per block of `samplesPerPixel` frames, final partial block included.
    static func reference(_ samples: [Int16], channels: Int, samplesPerPixel: Int) -> [Int] {
        var out: [Int] = []
        let frames = samples.count / channels
        var start = 0
        while start < frames {
            let end = min(frames, start + samplesPerPixel)
            var low = Int.max
            var high = Int.min
            for frame in start..<end {
                var sum = 0
                for channel in 0..<channels { sum += Int(samples[frame * channels + channel]) }
                let value = sum / channels
                low = min(low, value)
                high = max(high, value)
            }
            out += [low, high]
            start = end
        }
        return out
    }

    @Test("render --waveform equals audiowaveform's computation on the rendered WAV", arguments: [
        (WaveformZoom.samplesPerPixel(256), 16), (.samplesPerPixel(512), 8), (.pixelsPerSecond(100), 8), (.pixelsPerSecond(33), 16),
    ])
    func renderPeaks(zoom: WaveformZoom, bits: Int) async throws {
        let fixture = try FixtureConversation()
        var options = RenderOptions()
        options.waveform = WaveformOptions(zoom: zoom, bits: bits)
        _ = try await fixture.render(to: "out.wav", options: options, waveform: "peaks.json")
        let wav = try WAVReference.read(fixture.directory.file("out.wav"))
        let samplesPerPixel = try zoom.samplesPerPixel(sampleRate: 44_100)
        var expected = Self.reference(wav.samples, channels: 1, samplesPerPixel: samplesPerPixel)
        if bits == 8 { expected = expected.map { $0 / 256 } }

        let json = try JSONSerialization.jsonObject(with: Data(contentsOf: fixture.directory.file("peaks.json"))) as! [String: Any]
        #expect(json["version"] as? Int == 2)
        #expect(json["channels"] as? Int == 1)
        #expect(json["sample_rate"] as? Int == 44_100)
        #expect(json["samples_per_pixel"] as? Int == samplesPerPixel)
        #expect(json["bits"] as? Int == bits)
        #expect(json["length"] as? Int == expected.count / 2)
        #expect(json["data"] as? [Int] == expected)
    }

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
        let expected = Self.reference(wav.samples, channels: 2, samplesPerPixel: 300)
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
        await expectAudioError(.invalidArgument, mentioning: ["--pixels-per-second 30000", "minimum is 2"]) {
            _ = try WaveformZoom.pixelsPerSecond(30_000).samplesPerPixel(sampleRate: 44_100)
        }
    }
}
