import ChorusFixtures
import ChorusTestSupport
import Foundation
import Testing

@testable import ChorusAudio

@Suite("Chapter marks")
struct ChapterMarkTests {
    @Test("titles: the speaker and the message's first words, cut at a word with an ellipsis; the speaker alone without text")
    func titles() {
        #expect(
            ChapterTitle.make(speaker: "Maya", text: "Can someone pick me up after practice today at five?")
                == "Maya: Can someone pick me up after practice today…")
        #expect(ChapterTitle.make(speaker: "Mom", text: "  Dinner\nat   seven. ") == "Mom: Dinner at seven.")
        #expect(ChapterTitle.make(speaker: "Dad", text: nil) == "Dad")
        #expect(ChapterTitle.make(speaker: "Dad", text: " \n ") == "Dad")
        let long = String(repeating: "x", count: 80)
        #expect(ChapterTitle.make(speaker: "Al", text: long) == "Al: " + String(repeating: "x", count: ChapterTitle.maximumCharacters) + "…")
        #expect(ChapterTitle.make(speaker: "Ana", text: "Já chegámos — até já 👋") == "Ana: Já chegámos — até já 👋")
    }

    @Test("marks are contiguous: each from its message's start to the next one's, the last to the end")
    func contiguous() {
        let marks = ChapterMark.contiguous(titles: ["a", "b", "c"], starts: [0, 100, 250], total: 400)
        #expect(marks.map(\.frames) == [0..<100, 100..<250, 250..<400])
        #expect(ChapterMark.contiguous(titles: ["a", "b"], starts: [0], total: 10).count == 1)
        #expect(ChapterMark.milliseconds(frames: 22_050, sampleRate: 44_100) == 500)
        #expect(ChapterMark.milliseconds(frames: 66, sampleRate: 44_100) == 1)  // 1.497 ms
        #expect(WebVTT.timestamp(milliseconds: 3_723_004) == "01:02:03.004")
    }

    @Test("more than 255 chapters in MP3: a top-level table of contents of child tables; ffprobe reads all, in order")
    func manyChaptersInMP3() async throws {
        try #require(Referee.available, "ffmpeg/ffprobe (the referee) is not installed")
        let directory = try TemporaryDirectory()
        let format = AudioFormat(sampleRate: 24_000, channels: 1)
        let count = 300
        let titles = (0..<count).map { "Speaker \($0 % 4): message \($0) — ünïcödé ✓" }
        let url = directory.file("many.mp3")
        let output = try EncodedOutput(file: url)
        let encoder = try MP3Encoder(output: output, format: format, bitRate: 64_000, chapterTitles: titles)
        let frames = 600  // 25 ms each
        let clip = SignalGenerator.tone(frequency: 440, amplitude: 0.3, seconds: Double(frames * count) / 24_000, format: format)
        try AudioFileWriter.encode(clip, with: encoder, finishing: false)
        try encoder.finish(chapters: (0..<count).map { ChapterMark(title: titles[$0], frames: ($0 * frames)..<(($0 + 1) * frames)) })
        try output.finish()
        let tag = try ID3ChapterTag(titles: titles)
        let chapters = try await Referee.chapters(url)
        try #require(chapters.count == count)
        for (index, chapter) in chapters.enumerated() {
            #expect(chapter.title == titles[index])
            #expect(abs(chapter.start - Double(index) * 0.025) < 0.0005 && abs(chapter.end - Double(index + 1) * 0.025) < 0.0005)
        }
        let bytes = try Data(contentsOf: url)
        #expect(bytes.prefix(3) == Data("ID3".utf8))
        #expect(bytes.prefix(tag.size).range(of: Data("toc1\u{0}".utf8)) != nil, "a second child table for chapters 255…299")
        #expect(try AudioFileReader(url: url).readAll().frameCount == frames * count)
    }

    @Test(
        "ID3: titles that may grow get room in the tag's padding; the grown titles are read back, and ones too long for the room keep their first form"
    )
    func growingTitles() async throws {
        try #require(Referee.available, "ffmpeg/ffprobe (the referee) is not installed")
        let directory = try TemporaryDirectory()
        let format = AudioFormat(sampleRate: 24_000, channels: 1)
        let first = ["Mom", "Dad: On my way.", "Maya"]
        let grown = ["Mom: Can someone pick me up after practice today…", "Dad: On my way.", "Maya: " + String(repeating: "😀", count: 120) + "…"]
        let url = directory.file("grown.mp3")
        let output = try EncodedOutput(file: url)
        let encoder = try MP3Encoder(output: output, format: format, bitRate: 64_000, chapterTitles: first, growingTitles: 2)
        try AudioFileWriter.encode(SignalGenerator.tone(frequency: 440, amplitude: 0.3, seconds: 3, format: format), with: encoder, finishing: false)
        try encoder.finish(chapters: (0..<3).map { ChapterMark(title: grown[$0], frames: ($0 * 24_000)..<(($0 + 1) * 24_000)) })
        try output.finish()
        let tag = try ID3ChapterTag(titles: first, growing: 2)
        #expect(tag.size == (try ID3ChapterTag(titles: first)).size + 2 * ID3ChapterTag.roomPerGrowingTitle)
        // Mom's title fits the room kept for two; Maya's 120 emoji (4 bytes each in UTF-16) would not, and stay her name.
        let chapters = try await Referee.chapters(url)
        #expect(chapters.map(\.title) == [grown[0], first[1], first[2]])
        #expect(chapters.map(\.start).map { ($0 * 1000).rounded() } == [0, 1000, 2000])
        let bytes = try Data(contentsOf: url)
        let size = bytes[6..<10].reduce(0) { $0 << 7 | Int($1) } + 10
        #expect(size == tag.size && bytes[size...].starts(with: [0xFF]), "the audio starts right after the tag and its padding")
        #expect(try AudioFileReader(url: url).readAll().frameCount == 3 * 24_000)
    }

    @Test("the Ogg page checksum equals libavformat's on the pages it writes; rewritten times keep every page valid")
    func oggChecksum() async throws {
        try #require(Referee.available, "ffmpeg/ffprobe (the referee) is not installed")
        let format = AudioFormat(sampleRate: 48_000, channels: 1)
        let titles = ["First", "Second", "Third"]
        let output = try EncodedOutput(file: nil, memory: true, subject: "ogg in memory")
        let encoder = try CodecEncoder(output: output, format: format, codec: .opusInOgg, bitRate: 32_000, chapterTitles: titles)
        try AudioFileWriter.encode(SignalGenerator.tone(frequency: 300, amplitude: 0.3, seconds: 3, format: format), with: encoder, finishing: false)
        let written = try #require(output.bytes)
        // Every page libavformat wrote so far carries a checksum our function reproduces.
        var offset = 0
        var pages = 0
        while offset + 27 <= written.count, written[offset..<offset + 4].elementsEqual("OggS".utf8) {
            let segments = Int(written[offset + 26])
            let end = offset + 27 + segments + written[(offset + 27)..<(offset + 27 + segments)].reduce(0) { $0 + Int($1) }
            guard end <= written.count else { break }
            var page = Array(written[offset..<end])
            let stored = UInt32(page[22]) | UInt32(page[23]) << 8 | UInt32(page[24]) << 16 | UInt32(page[25]) << 24
            page.replaceSubrange(22..<26, with: [0, 0, 0, 0])
            #expect(OggChapterTimes.checksum(page[...]) == stored, "page at byte \(offset)")
            pages += 1
            offset = end
        }
        #expect(pages >= 3)
        try encoder.finish(chapters: [
            ChapterMark(title: "First", frames: 0..<48_000), ChapterMark(title: "Second", frames: 48_000..<96_000),
            ChapterMark(title: "Third", frames: 96_000..<144_000),
        ])
        let directory = try TemporaryDirectory()
        let url = directory.file("three.ogg")
        try #require(try output.finish()).write(to: url)
        let chapters = try await Referee.chapters(url)
        #expect(chapters.map(\.title) == titles)
        #expect(chapters.map(\.start) == [0, 1, 2])
        #expect(try Referee.decodedFrames(url, channels: 1) == 144_000)
    }
}
