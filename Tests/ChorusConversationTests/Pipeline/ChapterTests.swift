import ChorusAudio
import ChorusConversation
import ChorusFixtures
import ChorusTestSupport
import Foundation
import Testing

@testable import ChorusWire

/// Chapters in the file itself, read back by ffprobe (the referee) and checked against the timeline.
@Suite("Chapters in the file")
struct ChapterTests {
    static func withChapters() -> RenderOptions {
        var options = RenderOptions()
        options.chapters = true
        return options
    }

    /// ffprobe's chapters equal the timeline: one per message, starting where it starts (to the
    /// millisecond), ending where the next starts or the file ends, titled `Speaker: first words…`.
    /// Ogg comments hold start times only: ffprobe ends the last chapter at its own estimate of the
    /// stream's length (which counts the Opus pre-skip), so that one end is not ours to check.
    static func expectChapters(_ url: URL, match timeline: Timeline, titles: [String]) async throws {
        let lastEndStored = url.pathExtension != "ogg"
        let chapters = try await Referee.chapters(url)
        try #require(chapters.count == timeline.segments.count, "\(url.lastPathComponent): \(chapters.count) chapters")
        for (index, (chapter, segment)) in zip(chapters, timeline.segments).enumerated() {
            let end = index + 1 < timeline.segments.count ? timeline.segments[index + 1].start : timeline.duration
            #expect(
                abs(chapter.start - segment.start) <= 0.0005,
                "\(url.lastPathComponent) chapter \(index) starts at \(chapter.start), message at \(segment.start)")
            #expect(
                abs(chapter.end - end) <= 0.0005 || (!lastEndStored && index == timeline.segments.count - 1),
                "\(url.lastPathComponent) chapter \(index) ends at \(chapter.end), not \(end)")
            #expect(chapter.title == titles[index])
        }
    }

    @Test(
        "MP3, M4A and Ogg carry one chapter per message, read back by ffprobe to the millisecond; gapless length intact",
        arguments: [OutputFileFormat.mp3, .m4a, .ogg])
    func chaptersReadBack(format: OutputFileFormat) async throws {
        try #require(Referee.available, "ffmpeg/ffprobe (the referee) is not installed")
        let fixture = try FixtureConversation()
        let name = "out.\(format.rawValue)"
        let result = try await fixture.render(to: name, options: Self.withChapters())
        let url = fixture.directory.file(name)
        let titles = fixture.conversation.messages.map { ChapterTitle.make(speaker: $0.speaker, text: $0.text) }
        #expect(titles[0] == "Sarah: Message 0 <ok> & done")
        try await Self.expectChapters(url, match: result.timeline, titles: titles)
        // The chapters change nothing else: same decoded length (delay and padding still dropped), same samples.
        let decoded = try AudioFileReader(url: url).readAll()
        #expect(decoded.frameCount == result.timeline.samples)
        let referee = format == .m4a ? try Referee.streamDurationFrames(url) : try Referee.decodedFrames(url, channels: 1)
        #expect(referee == result.timeline.samples, "ffmpeg decodes \(referee) frames, the timeline says \(result.timeline.samples)")
        _ = try await fixture.render(to: "plain." + format.rawValue)
        let plain = try AudioFileReader(url: fixture.directory.file("plain." + format.rawValue)).readAll()
        #expect(plain.samples == decoded.samples, "chapters changed the audio")
        #expect(try await Referee.chapters(fixture.directory.file("plain." + format.rawValue)).isEmpty, "chapters without asking")
        if format == .mp3 {
            let bytes = try Data(contentsOf: url)
            #expect(bytes.prefix(3) == Data("ID3".utf8), "the ID3 tag comes first")
            let plainBytes = try Data(contentsOf: fixture.directory.file("plain.mp3"))
            #expect(bytes.suffix(plainBytes.count) == plainBytes, "the file is the plain one (LAME tag included) behind the ID3 tag")
        }
    }

    @Test("WAV and FLAC have no chapter format: asking for chapters changes nothing")
    func noChapterFormat() async throws {
        let fixture = try FixtureConversation()
        _ = try await fixture.render(to: "a.wav", options: Self.withChapters())
        _ = try await fixture.render(to: "b.wav")
        #expect(try Data(contentsOf: fixture.directory.file("a.wav")) == Data(contentsOf: fixture.directory.file("b.wav")))
        _ = try await fixture.render(to: "c.flac", options: Self.withChapters())
        #expect(try await Referee.chapters(fixture.directory.file("c.flac")).isEmpty)
    }

    @Test("a streamed MP3 leaves out the ID3 chapter tag with the LAME frame, a streamed Ogg its chapter comments; the stored files have them")
    func streamed() async throws {
        try #require(Referee.available, "ffmpeg/ffprobe (the referee) is not installed")
        let fixture = try FixtureConversation()
        let chorus = try Chorus(configuration: FixtureConversation.configuration(cache: fixture.directory.file("cache")))
        for format in [OutputFileFormat.mp3, .ogg] {
            let stream = AudioChunkStream()
            var outputs = RenderOutputs(audio: fixture.directory.file("live.\(format.rawValue)"))
            outputs.stream = stream
            let listener = Task {
                var received = Data()
                for try await chunk in stream { received.append(chunk) }
                return received
            }
            let result = try await chorus.render(fixture.conversation, options: Self.withChapters(), to: outputs).result()
            let streamed = try await listener.value
            let stored = try Data(contentsOf: fixture.directory.file("live.\(format.rawValue)"))
            let titles = fixture.conversation.messages.map { ChapterTitle.make(speaker: $0.speaker, text: $0.text) }
            try await Self.expectChapters(fixture.directory.file("live.\(format.rawValue)"), match: result.timeline, titles: titles)
            let copy = fixture.directory.file("streamed.\(format.rawValue)")
            try streamed.write(to: copy)
            #expect(try await Referee.chapters(copy).isEmpty)
            if format == .mp3 {
                let skipped = stored.count - streamed.count
                #expect(stored.dropFirst(skipped) == streamed, "the stream is the file from its first audio frame")
                #expect(stored.prefix(skipped).range(of: Data("CHAP".utf8)) != nil && stored.prefix(skipped).range(of: Data("Info".utf8)) != nil)
            } else {
                // Only the comment page differs: the audio pages (sequence numbers, serial, checksums) are the same bytes.
                let header = stored.count - streamed.count
                #expect(header > 0 && stored.suffix(streamed.count - 4096) == streamed.suffix(streamed.count - 4096))
                #expect(try Referee.decodedFrames(copy, channels: 1) == result.timeline.samples)
                #expect(
                    try AudioFileReader(url: copy).readAll().samples == AudioFileReader(url: fixture.directory.file("live.ogg")).readAll().samples)
            }
            #expect(try AudioFileReader(url: fixture.directory.file("live.\(format.rawValue)")).readAll().frameCount == result.timeline.samples)
        }
    }
}
