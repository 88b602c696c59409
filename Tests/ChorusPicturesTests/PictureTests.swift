import ChorusAudio
import ChorusFixtures
import ChorusTestSupport
import Foundation
import Testing

@testable import ChorusPictures
@testable import ChorusWire

@Suite("Waveform pictures")
struct PictureTests {
    static let format = AudioFormat(sampleRate: 8_000, channels: 1)
    /// Speaker A, gap, speaker B, gap, speaker A: 2 s each, 1 s gaps of digital silence.
    static let plan: [(speaker: String?, frames: Range<Int>, amplitude: Double)] = [
        ("A&B", 0..<16_000, 0.6), (nil, 16_000..<24_000, 0), ("Zoë", 24_000..<40_000, 0.3), (nil, 40_000..<48_000, 0), ("A&B", 48_000..<64_000, 0.9),
    ]

    func fixture() throws -> (TemporaryDirectory, URL, Timeline) {
        let directory = try TemporaryDirectory()
        let audio = SignalGenerator.concatenate(
            Self.plan.map { part in
                part.speaker == nil
                    ? SignalGenerator.silence(seconds: 1, format: Self.format)
                    : SignalGenerator.tone(frequency: 200, amplitude: part.amplitude, seconds: 2, format: Self.format)
            })
        let url = directory.file("chat.wav")
        try AudioFileWriter.write(audio, to: url)
        let segments = Self.plan.enumerated().compactMap { index, part -> Timeline.Segment? in
            guard let speaker = part.speaker else { return nil }
            return Timeline.Segment(
                index: index / 2, speaker: speaker, start: 0, end: 0, startSample: part.frames.lowerBound,
                endSample: part.frames.upperBound, text: nil, source: "x", gainDB: 0, voice: nil, fallback: nil, words: nil)
        }
        return (directory, url, Timeline(format: Self.format, samples: 64_000, gapMs: 1_000, segments: segments))
    }

    /// The columns lying wholly inside one part of the plan, with that part's speaker (nil: a gap).
    func expectations(_ picture: WaveformPicture) -> [(x: Int, speaker: String?)] {
        let spp = picture.samplesPerPixel
        return (0..<picture.columns.count).compactMap { x in
            let frames = (x * spp)..<min(64_000, (x + 1) * spp)
            guard let part = Self.plan.first(where: { $0.frames.contains(frames.lowerBound) && $0.frames.contains(frames.upperBound - 1) }) else {
                return nil
            }
            return (x, part.speaker)
        }
    }

    @Test("PNG: the size asked for; each speaker's colour in its own columns only; silence columns grey and flat", arguments: ["light", "dark"])
    func png(themeName: String) throws {
        let (directory, url, timeline) = try fixture()
        let theme = PictureTheme.named(themeName)!
        let picture = try WaveformPicture.make(audio: url, timeline: timeline, options: .init(width: 200, height: 160, theme: theme))
        #expect(picture.speakers == ["A&B", "Zoë"])
        let png = directory.file("chat.png")
        try picture.png().write(to: png)
        let decoded = try PNGReferee.columns(of: png, rows: picture.waveTop...picture.waveBottom)
        #expect(decoded.width == 200 && decoded.height == 160)
        #expect(decoded.background == String(PictureTheme.hex(theme.background).dropFirst()))
        let gap = String(PictureTheme.hex(theme.gap).dropFirst())
        let expected = expectations(picture)
        #expect(expected.count == 200, "every column lies inside one part (the boundaries fall on column edges)")
        for (x, speaker) in expected {
            if let speaker {
                let colour = String(PictureTheme.hex(theme.speaker(picture.speakers.firstIndex(of: speaker)!)).dropFirst())
                #expect(decoded.columns[x] == [colour], "column \(x) is \(speaker)'s")
                let extent = try #require(decoded.extents[x])
                #expect(extent[1] - extent[0] > 10, "column \(x) has a waveform")
            } else {
                #expect(decoded.columns[x] == [gap], "column \(x) is a gap")
                let extent = try #require(decoded.extents[x])
                #expect(extent[1] - extent[0] <= 1, "column \(x) is flat")
            }
        }
    }

    @Test("an intro and outro in their own colour, a music band under the bed's span, both in the legend (PNG read back, SVG)")
    func bookendsAndMusic() throws {
        let (directory, url, plain) = try fixture()
        // The first part is the intro, the last the outro; the bed is heard from the start to the end of the second gap.
        let messages = plain.segments.filter { $0.startSample == 24_000 }
        func bookend(_ frames: Range<Int>) -> Timeline.Bookend {
            Timeline.Bookend(
                start: 0, end: 0, startSample: frames.lowerBound, endSample: frames.upperBound, speaker: nil, text: nil,
                source: "jingle.mp3", gainDB: 0, voice: nil, words: nil)
        }
        let timeline = Timeline(
            format: Self.format, samples: 64_000, gapMs: 1_000, segments: messages, intro: bookend(0..<16_000),
            outro: bookend(48_000..<64_000),
            music: Timeline.Music(
                start: 0, end: 6, startSample: 0, endSample: 48_000, source: "bed.mp3", levelLU: -20,
                duckDB: 12, gainDB: 0, passes: 1))
        let picture = try WaveformPicture.make(audio: url, timeline: timeline, options: .init(width: 200, height: 160))
        let theme = PictureTheme.light
        #expect(picture.legend.map(\.name) == ["Zoë", "Intro/outro", "Music"])
        #expect(picture.music == 0..<150)
        let png = directory.file("produced.png")
        try picture.png().write(to: png)
        let hex = { (colour: PictureTheme.Colour) in String(PictureTheme.hex(colour).dropFirst()) }
        let wave = try PNGReferee.columns(of: png, rows: picture.waveTop...picture.waveBottom)
        for (x, speaker) in expectations(picture) {
            let frame = x * picture.samplesPerPixel
            let expected = frame < 16_000 || frame >= 48_000 ? theme.bookend : speaker == nil ? theme.gap : theme.speaker(0)
            #expect(wave.columns[x] == [hex(expected)], "column \(x)")
        }
        let band = try PNGReferee.columns(of: png, rows: picture.musicRows)
        #expect((0..<150).allSatisfy { band.columns[$0] == [hex(theme.music)] })
        #expect((150..<200).allSatisfy { band.columns[$0].isEmpty })
        let svg = picture.svg()
        #expect(svg.contains(#"fill="\#(PictureTheme.hex(theme.music))""#) && svg.contains(">Intro/outro<") && svg.contains(">Music<"))
    }

    @Test("without a timeline: one colour for the whole waveform, no legend")
    func singleColour() throws {
        let (directory, url, _) = try fixture()
        let picture = try WaveformPicture.make(audio: url, timeline: nil, options: .init(width: 300, height: 100))
        #expect(picture.speakers.isEmpty && picture.legendHeight == 0)
        let png = directory.file("plain.png")
        try picture.png().write(to: png)
        let decoded = try PNGReferee.columns(of: png, rows: picture.waveTop...picture.waveBottom)
        let colours = Set(decoded.columns.flatMap { $0 })
        #expect(colours == [PictureTheme.hex(PictureTheme.light.palette[0]).dropFirst().description])
    }

    @Test("SVG: one path per colour with a line per column, the legend escaped, the axis labelled")
    func svg() throws {
        let (directory, url, timeline) = try fixture()
        let picture = try WaveformPicture.make(audio: url, timeline: timeline, options: .init(width: 200, height: 160))
        let svg = picture.svg()
        _ = directory
        #expect(svg.hasPrefix("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"200\" height=\"160\""))
        #expect(svg.contains(">A&amp;B</text>") && svg.contains(">Zoë</text>"))
        #expect(svg.contains(">0:00</text>") && svg.contains(">0:05</text>") && !svg.contains(">0:02</text>"), "ticks 80 px or more apart")
        let lines = svg.components(separatedBy: "\n").filter { $0.hasPrefix("<path") }
        let total = lines.map { $0.components(separatedBy: "M").count - 1 }.reduce(0, +)
        #expect(total == picture.columns.count)
        #expect(lines.count == 3, "two speakers and the gaps")
    }

    @Test("absurd sizes are refused naming the field")
    func sizes() throws {
        #expect(throws: AudioError.self) { try WaveformPicture.Options(width: 50).validate() }
        #expect(throws: AudioError.self) { try WaveformPicture.Options(height: 5_000).validate() }
        #expect(WaveformPicture.clock(3_725) == "1:02:05" && WaveformPicture.clock(65) == "1:05")
    }
}
