import ChorusFixtures
import Foundation
import Testing

@testable import ChorusAudio

@Suite("Atomic outputs and sinks")
struct AtomicOutputTests {
    @Test("nothing appears at the destination until commit; a discarded write leaves nothing and keeps the old file")
    func commitOrNothing() throws {
        let directory = try TemporaryDirectory()
        let destination = directory.file("out.json")
        try Data("old".utf8).write(to: destination)
        do {
            let output = try AtomicOutput(destination: destination)
            try output.write(Data("half".utf8))
            #expect(try String(contentsOf: destination, encoding: .utf8) == "old")
            output.discard()
        }
        #expect(try String(contentsOf: destination, encoding: .utf8) == "old")
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.url.path) == ["out.json"])
        let output = try AtomicOutput(destination: destination)
        try output.write(Data("new".utf8))
        try output.commit()
        #expect(try String(contentsOf: destination, encoding: .utf8) == "new")
    }

    @Test("a write that fails mid-way (an encoder error) leaves no file at all")
    func failureMidWrite() throws {
        let directory = try TemporaryDirectory()
        let destination = directory.file("out.wav")
        do {
            let file = try AtomicOutput(destination: destination)
            defer { file.discard() }
            let output = try EncodedOutput(file: file.temporaryURL, subject: destination.path)
            let encoder = try SndFileEncoder(output: output, format: .speech, container: .wav)
            let clip = SignalGenerator.tone(frequency: 440, amplitude: 0.5, seconds: 1, format: .speech)
            var pcm: [Int16] = []
            try clip.samples.withUnsafeBufferPointer { samples in
                PCM16.quantize(samples, into: &pcm)
                try pcm.withUnsafeBufferPointer { try encoder.write(samples, pcm16: $0) }
            }
            // Something fails before the end: the render throws and the file is abandoned.
            throw AudioError(.corrupt, subject: "messages[1]", reason: "simulated")
        } catch let error as AudioError {
            #expect(error.subject == "messages[1]")
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.url.path).isEmpty)
    }

    @Test(
        "a destination that is a device (a link to /dev/null here) is written in place: the link and the device stay what they were, no temporary file is left"
    )
    func device() throws {
        let directory = try TemporaryDirectory()
        let link = directory.file("out.json")
        try FileManager.default.createSymbolicLink(atPath: link.path, withDestinationPath: "/dev/null")
        let output = try AtomicOutput(destination: link)
        try output.write(Data("bytes".utf8))
        try output.commit()
        output.discard()
        let attributes = try FileManager.default.attributesOfItem(atPath: link.path)
        #expect(attributes[.type] as? FileAttributeType == .typeSymbolicLink, "the link was replaced: \(attributes[.type] ?? "?")")
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: link.path) == "/dev/null")
        #expect(try FileManager.default.attributesOfItem(atPath: "/dev/null")[.type] as? FileAttributeType == .typeCharacterSpecial)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.url.path) == ["out.json"])
    }

    @Test("a missing folder or a folder in the way is refused up front, naming the path")
    func refusals() throws {
        let directory = try TemporaryDirectory()
        #expect(throws: AudioError.self) { _ = try AtomicOutput(destination: directory.file("nowhere/out.mp3")) }
        try FileManager.default.createDirectory(at: directory.file("taken.mp3"), withIntermediateDirectories: true)
        do {
            _ = try AtomicOutput(destination: directory.file("taken.mp3"))
            Issue.record("expected an error")
        } catch let error as AudioError {
            #expect(error.description.contains("taken.mp3") && error.description.contains("folder"))
        }
    }

    @Test(
        "file, memory and stream receive the same encoded bytes; an MP3 stream lacks only the tag frame",
        arguments: [
            (OutputFileFormat.mp3, 44_100, 1, 128_000), (.mp3, 24_000, 2, 64_000), (.mp3, 8_000, 1, 8_000),
            (.mp3, 11_025, 1, 32_000), (.mp3, 48_000, 2, 320_000), (.ogg, 48_000, 1, 64_000),
        ])
    func sinksAgree(format: OutputFileFormat, rate: Int, channels: Int, bitRate: Int) async throws {
        let directory = try TemporaryDirectory()
        let audio = AudioFormat(sampleRate: rate, channels: channels)
        let clip = SignalGenerator.speechLike(fundamental: 150, seconds: 2.5, format: audio, seed: 5)
        let stream = AudioChunkStream()
        let collected = Task {
            var all = Data()
            for try await chunk in stream { all.append(chunk) }
            return all
        }
        let url = directory.file("out.\(format.rawValue)")
        let output = try EncodedOutput(file: url, memory: true, stream: stream, subject: url.path)
        try AudioFileWriter.encode(
            clip, with: EncoderFactory.make(EncoderSettings(fileFormat: format, format: audio, bitRate: bitRate), output: output))
        let memory = try #require(try output.finish())
        let streamed = try await collected.value
        let file = try Data(contentsOf: url)
        #expect(memory == file)
        if format == .mp3 {
            let first = try MP3TagFrame.size(of: file)
            let tagged = file.prefix(first).range(of: Data("Info".utf8)) != nil || file.prefix(first).range(of: Data("Xing".utf8)) != nil
            // LAME writes no tag when one frame at this bit rate is too small to hold it (8 kbit/s at 8 kHz).
            #expect(tagged == !(rate == 8_000 && bitRate == 8_000))
            #expect(streamed == (tagged ? file.dropFirst(first) : file), "stream = file minus its first (tag) frame")
            // The stream decodes on its own (without gapless trimming it is longer by the encoder delay and padding).
            #expect(try AudioFileReader(data: streamed, name: "stream").readAll().frameCount >= clip.frameCount)
        } else {
            #expect(streamed == file)
        }
        if format != .mp3 || !(rate == 8_000 && bitRate == 8_000) {
            #expect(try AudioFileReader(url: url).readAll().frameCount == clip.frameCount, "gapless: exactly the samples encoded")
        }
    }

    @Test("a format that patches its header cannot stream")
    func unstreamable() {
        var outputs = RenderOutputs(format: .m4a, keepAudioInMemory: false)
        outputs.stream = AudioChunkStream()
        #expect(throws: AudioError.self) { try outputs.validate(options: RenderOptions()) }
    }
}

/// Reads the first MP3 frame's length from its header (MPEG-1/2/2.5 layer III), independently of LAME.
enum MP3TagFrame {
    static func size(of data: Data) throws -> Int {
        let bytes = [UInt8](data.prefix(4))
        guard bytes.count == 4, bytes[0] == 0xFF, bytes[1] & 0xE0 == 0xE0 else { throw AudioError(.corrupt, subject: "mp3", reason: "no frame sync") }
        let version = (bytes[1] >> 3) & 3  // 3: MPEG-1, 2: MPEG-2, 0: MPEG-2.5
        let bitrateIndex = Int(bytes[2] >> 4)
        let rateIndex = Int((bytes[2] >> 2) & 3)
        let padding = Int((bytes[2] >> 1) & 1)
        let mpeg1 = [0, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320]
        let mpeg2 = [0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160]
        let rates: [UInt8: [Int]] = [3: [44_100, 48_000, 32_000], 2: [22_050, 24_000, 16_000], 0: [11_025, 12_000, 8_000]]
        let kbps = version == 3 ? mpeg1[bitrateIndex] : mpeg2[bitrateIndex]
        let rate = rates[version]![rateIndex]
        return (version == 3 ? 144_000 : 72_000) * kbps / rate + padding
    }
}
