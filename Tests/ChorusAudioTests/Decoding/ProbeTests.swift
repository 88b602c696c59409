import ChorusFixtures
import ChorusTestSupport
import Foundation
import Testing

@testable import ChorusAudio

@Suite("Probe: exact durations")
struct ProbeTests {
    @Test(
        "MP3 with a LAME/Xing tag reports exactly the samples encoded",
        arguments: [
            (ClipEncoding.mp3, 44_100), (.mp3, 24_000), (.mp3, 22_050), (.mp3VBR, 44_100), (.mp3VBR, 16_000),
        ])
    func gaplessMP3(encoding: ClipEncoding, rate: Int) throws {
        let directory = try TemporaryDirectory()
        let format = AudioFormat(sampleRate: rate, channels: 1)
        let tone = SignalGenerator.tone(frequency: 440, amplitude: 0.5, seconds: 2.345, format: format)
        let url = directory.file("tone.mp3")
        try encoding.write(tone, to: url)
        let probe = try AudioProbe.probe(url)
        #expect(probe.samples == tone.frameCount)
        #expect(probe.duration == Double(tone.frameCount) / Double(rate))
        #expect(probe.stream.codec.hasPrefix("mp3"))
        #expect(probe.stream.sampleRate == rate && probe.stream.channels == 1)
        if Referee.available {
            #expect(try Referee.decodedFrames(url, channels: 1) == probe.samples, "ffmpeg must decode the same count")
        }
    }

    @Test("MP3 without gapless tags reports what FFmpeg decodes (delay and padding included)")
    func untaggedMP3() throws {
        let directory = try TemporaryDirectory()
        let tone = SignalGenerator.tone(frequency: 440, amplitude: 0.5, seconds: 2, format: .speech)
        let url = directory.file("untagged.mp3")
        try ClipEncoding.mp3Untagged.write(tone, to: url)
        let probe = try AudioProbe.probe(url)
        #expect(probe.samples > tone.frameCount, "without a tag the encoder delay stays in")
        #expect(probe.samples - tone.frameCount < 3 * 1_152)
        if Referee.available {
            #expect(try Referee.decodedFrames(url, channels: 1) == probe.samples)
        }
    }

    @Test("probe JSON carries the documented fields")
    func json() throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("tone.flac")
        try ClipEncoding.flac.write(
            SignalGenerator.tone(frequency: 440, amplitude: 0.5, seconds: 1, format: AudioFormat(sampleRate: 16_000, channels: 2)), to: url)
        let object = try JSONSerialization.jsonObject(with: AudioProbe.probe(url).jsonData()) as! [String: Any]
        #expect(object["container"] as? String == "flac")
        #expect(object["sample_rate"] as? Int == 16_000)
        #expect(object["channels"] as? Int == 2)
        #expect(object["samples"] as? Int == 16_000)
        #expect(object["duration"] as? Double == 1)
    }
}
