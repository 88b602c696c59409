import ChorusFixtures
import ChorusTestSupport
import Foundation
import Testing

@testable import ChorusAudio

@Suite("Parallel MP3 and AAC encoding", .enabled(if: Referee.available, "needs ffmpeg as the referee decoder"))
struct ParallelEncoderTests {
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
            var message = SignalGenerator.speechLike(
                fundamental: 110 + 35 * Double(index % 5), seconds: 0.7 + 0.15 * Double(index % 4),
                format: format, seed: UInt64(index + 1), amplitude: 0.6)
            for frame in 0..<message.frameCount {
                for channel in 0..<format.channels {
                    message.samples[frame * format.channels + channel] =
                        message.samples[frame * format.channels + channel]
                        * (channel == 0 ? 1 : 0.7) + Float(0.002 * sin(Double(frame) * 0.05 + Double(channel)))
                }
            }
            Fader(milliseconds: 5).apply(to: &message)
            samples += message.samples
        }
        return (AudioBuffer(format: format, samples: samples), gaps)
    }

    /// Encodes `audio` (fed 65,536 frames at a time, as the stitcher does) into `url` (MP3 or M4A, by its extension) with
    /// one encoder (`jobs == nil`) or in pieces; returns the cuts.
    static func encode(
        _ audio: AudioBuffer, jobs: Int?, minimumPieceSeconds: Double = 0, aacMargin: Int = AACJoiner.defaultMargin,
        chapters: [ChapterMark] = [], to url: URL
    ) throws -> [Int] {
        let titles = chapters.map(\.title)
        let output = try EncodedOutput(file: url)
        let bitRate = Self.bitRate(audio.format)
        let encoder: any AudioEncoder
        var cuts: () -> [Int] = { [] }
        switch (url.pathExtension, jobs) {
        case ("mp3", nil):
            encoder = try MP3Encoder(output: output, format: audio.format, bitRate: bitRate, chapterTitles: titles)
        case ("mp3", let jobs?):
            let parallel = try ParallelEncoder(
                joiner: MP3Joiner(
                    output: output, format: audio.format, bitRate: bitRate,
                    quality: RenderOptions.defaultMP3Quality, chapterTitles: titles),
                format: audio.format, jobs: jobs, minimumPieceSeconds: minimumPieceSeconds)
            (encoder, cuts) = (parallel, { parallel.cuts })
        case (_, nil):
            encoder = try CodecEncoder(output: output, format: audio.format, codec: .aacInM4A, bitRate: bitRate, chapterTitles: titles)
        case (_, let jobs?):
            let parallel = try ParallelEncoder(
                joiner: AACJoiner(
                    output: output, format: audio.format, bitRate: bitRate, chapterTitles: titles,
                    margin: aacMargin),
                format: audio.format, jobs: jobs, minimumPieceSeconds: minimumPieceSeconds)
            (encoder, cuts) = (parallel, { parallel.cuts })
        }
        try AudioFileWriter.encode(audio, with: encoder, finishing: false)
        try encoder.finish(chapters: chapters)
        try output.finish()
        return cuts()
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

    /// Every rate, mono and stereo alternating: each MPEG version (1, 2, 2.5: their frame sizes) in both of its
    /// side-information layouts (each rate in both was twice the time under the sanitizers for nothing the joiner reads).
    @Test(
        "MP3 pieces join into one stream: exact length, exact gaps, digital silence at every splice, codec-level difference",
        arguments: [(8_000, 1), (11_025, 2), (12_000, 1), (16_000, 2), (22_050, 1), (24_000, 2), (32_000, 1), (44_100, 2), (48_000, 1)])
    func mp3ExactAtEveryRate(rate: Int, channels: Int) throws {
        try Self.checkPieces(
            "mp3", AudioFormat(sampleRate: rate, channels: channels), frameSize: MP3Stream.samplesPerFrame(sampleRate: rate),
            margin: MP3Joiner.defaultMargin)
    }

    /// Every rate AAC has, mono and stereo alternating.
    @Test(
        "AAC pieces join into one M4A stream: exact length, exact gaps, digital silence at every splice, codec-level difference",
        arguments: [
            (8_000, 1), (11_025, 2), (12_000, 1), (16_000, 2), (22_050, 1), (24_000, 2), (32_000, 1), (44_100, 2),
            (48_000, 1), (64_000, 2), (88_200, 1), (96_000, 2),
        ])
    func aacExactAtEveryRate(rate: Int, channels: Int) throws {
        try Self.checkPieces("m4a", AudioFormat(sampleRate: rate, channels: channels), frameSize: 1024, margin: AACJoiner.defaultMargin)
    }

    /// Encodes a nine-message conversation with one encoder and in 9, 2 and 1 pieces, and checks each against the referee:
    /// the decoded length, cuts on the grid inside the gaps, exact zeros around every splice and in the gaps' middles,
    /// and noise against the input no worse than one encoder's. Gaps are 400 ms, or longer where the margins need it.
    static func checkPieces(_ fileExtension: String, _ format: AudioFormat, frameSize: Int, margin: Int) throws {
        let (rate, channels) = (format.sampleRate, format.channels)
        let gapMilliseconds = max(400, ((2 * margin + frameSize) * 1000 + rate - 1) / rate)
        let (audio, gaps) = Self.conversation(format, messages: 9, gapMilliseconds: gapMilliseconds)
        let directory = try TemporaryDirectory(prefix: "parallel-\(fileExtension)")
        let input = audio.samples.map(PCM16.quantize)
        let serialURL = directory.file("serial.\(fileExtension)")
        _ = try Self.encode(audio, jobs: nil, to: serialURL)
        let serial = try Referee.decodeS16Exact(serialURL, channels: channels)
        #expect(serial.count == input.count, "one encoder: \(serial.count / channels) frames decoded of \(audio.frameCount)")
        let serialNoise = Self.difference(serial, input, frames: 0..<audio.frameCount, channels: channels)

        // 9 pieces (a cut in every gap), 2 pieces (the first cut past half the audio), 1 piece.
        let half = audio.duration / 2
        for (minimum, pieces) in [(0.0, 9), (half, 2), (audio.duration, 1)] {
            let url = directory.file("pieces-\(pieces).\(fileExtension)")
            let cuts = try Self.encode(audio, jobs: 3, minimumPieceSeconds: minimum, to: url)
            let label = "\(fileExtension) \(rate) Hz, \(channels) ch, \(pieces) pieces"
            #expect(cuts.count == pieces - 1, "\(label): cut at \(cuts)")
            let decoded = try Referee.decodeS16Exact(url, channels: channels)
            try #require(decoded.count == input.count, "\(label): ffmpeg decodes \(decoded.count / channels) frames of \(audio.frameCount)")
            let ours = try AudioFileReader(url: url, outputFormat: format).readAll()
            #expect(ours.frameCount == audio.frameCount, "\(label): Chorus decodes \(ours.frameCount) frames")
            for cut in cuts {
                #expect(cut % frameSize == 0 && gaps.contains { $0.contains(cut - margin) && $0.contains(cut + margin - 1) }, "\(label): cut \(cut)")
                // ±576 samples, but no nearer a sound than `margin` (the codec rings past a sound's edge, one encoder too).
                guard let gap = gaps.first(where: { $0.contains(cut) }) else { continue }
                let splice = max(cut - 576, gap.lowerBound + margin) * channels..<min(cut + 576, gap.upperBound - margin) * channels
                let loud = splice.filter { decoded[$0] != 0 }
                #expect(
                    loud.isEmpty,
                    "\(label): not silent around the cut at \(cut): \(loud.count) samples from \(loud.first.map { $0 / channels - cut } ?? 0) past it, \(loud.prefix(4).map { decoded[$0] }); one encoder there \(loud.prefix(4).map { serial[$0] }); gap \(gaps.first { $0.contains(cut) }.map { "\($0.lowerBound - cut)..<\($0.upperBound - cut)" } ?? "")"
                )
            }
            // The codec rings past a sound's edge, and that ringing depends on the encoder's state, which a fresh piece's
            // encoder does not share: what must be exactly 0 is the gap `margin` samples away from sound, where cuts are.
            for gap in gaps where gap.count > 2 * margin {
                let middle = (gap.lowerBound + margin) * channels..<(gap.upperBound - margin) * channels
                let loud = middle.filter { decoded[$0] != 0 }
                #expect(
                    loud.isEmpty,
                    "\(label): gap \(gap) not silent in the middle: \(loud.count) samples, first at \(loud.first.map { $0 / channels } ?? 0) \(loud.prefix(3).map { decoded[$0] }); serial there \(loud.prefix(3).map { serial[$0] })"
                )
            }
            // Within the codec's own noise: no worse against the input than one encoder, give or take.
            let noise = Self.difference(decoded, input, frames: 0..<audio.frameCount, channels: channels)
            #expect(noise.rms <= serialNoise.rms * 1.25 + 1e-4, "\(label): \(noise.rms) RMS against the input, one encoder \(serialNoise.rms)")
        }
    }

    @Test("AAC cut with too little silence around it (256 samples) is not silent at the splice: the margin matters")
    func aacMarginMatters() throws {
        let format = AudioFormat(sampleRate: 44_100, channels: 2)
        let margin = 256
        let (audio, _) = Self.conversation(format, messages: 4, gapMilliseconds: ((2 * margin + 1024) * 1000 + 44_099) / 44_100)
        let directory = try TemporaryDirectory(prefix: "parallel-m4a")
        let url = directory.file("thin.m4a")
        let cuts = try Self.encode(audio, jobs: 2, aacMargin: margin, to: url)
        #expect(cuts.count == 3)
        let decoded = try Referee.decodeS16Exact(url, channels: 2)
        #expect(decoded.count == audio.samples.count)  // the length is right all the same
        let loudest = cuts.map { cut in decoded[((cut - 512) * 2)..<((cut + 512) * 2)].map { abs(Int($0)) }.max() ?? 0 }.max() ?? 0
        #expect(loudest > 0, "every splice silent even with a 256-sample margin: the default margin's measurement needs redoing")
    }

    @Test("chapters of a stream encoded in pieces: one per message, where the messages start", arguments: ["mp3", "m4a"])
    func chaptersInPieces(fileExtension: String) async throws {
        let format = AudioFormat(sampleRate: 44_100, channels: 2)
        let (audio, gaps) = Self.conversation(format, messages: 5, gapMilliseconds: 400)
        let starts = [0] + gaps.map(\.upperBound)
        let marks = ChapterMark.contiguous(titles: starts.indices.map { "Message \($0 + 1)" }, starts: starts, total: audio.frameCount)
        let directory = try TemporaryDirectory(prefix: "parallel-\(fileExtension)")
        let url = directory.file("chapters.\(fileExtension)")
        #expect(try Self.encode(audio, jobs: 2, chapters: marks, to: url).count == 4)
        #expect(try Referee.decodeS16Exact(url, channels: 2).count == audio.samples.count)
        let read = try await Referee.chapters(url)
        try #require(read.count == marks.count, "\(read)")
        for (chapter, mark) in zip(read, marks) {
            #expect(chapter.title == mark.title)
            #expect(abs(chapter.start - Double(mark.frames.lowerBound) / 44_100) < 0.002, "\(chapter) vs \(mark)")
        }
    }

    @Test(
        "silence too short to cut in leaves one piece, still exact (MP3: 20 ms gaps at 44.1 kHz; M4A: 300 ms at 8 kHz)",
        arguments: [("mp3", 44_100, 20), ("m4a", 8_000, 300)])
    func shortGapsNoCut(fileExtension: String, rate: Int, gapMilliseconds: Int) throws {
        let format = AudioFormat(sampleRate: rate, channels: 1)
        let (audio, _) = Self.conversation(format, messages: 6, gapMilliseconds: gapMilliseconds)
        let directory = try TemporaryDirectory(prefix: "parallel-\(fileExtension)")
        let url = directory.file("short.\(fileExtension)")
        #expect(try Self.encode(audio, jobs: 2, to: url).isEmpty)
        #expect(try Referee.decodeS16Exact(url, channels: 1).count == audio.frameCount)
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
            #expect(
                lame.withUnsafeBufferPointer { MP3Stream.crc16(0, UnsafeBufferPointer(rebasing: $0[0..<(start + 154)])) }
                    == UInt16(lame[start + 154]) << 8 | UInt16(lame[start + 155]))
            // Spoil every field the rewrite owns (counts, seek table, padding, music length and CRC, tag CRC).
            var template = lame
            for index in Array((start + 8)..<(start + 116)) + Array((start + 148)..<(start + 156)) { template[index] = 0x5A }
            template[start + 142] &= 0xF0
            template[start + 143] = 0
            let rebuilt = try MP3Stream.lameTag(
                template: template, frameOffsets: audioFrames.map { $0.lowerBound - first },
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
