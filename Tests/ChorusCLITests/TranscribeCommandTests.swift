import ChorusAudio
import ChorusFixtures
import ChorusTestSupport
import ChorusWire
import Foundation
import Testing

/// `chorus transcribe` on the repository's recorded sample clips, with the model set-up installs.
@Suite("chorus transcribe")
struct TranscribeCommandTests {
    /// The suite's scratch folder, removed with the suite's instance (each test has its own).
    let folder: TemporaryDirectory
    var directory: URL { folder.url }

    init() throws {
        folder = try TemporaryDirectory(prefix: "chorus-transcribe")
    }

    func file(_ name: String) -> URL { directory.appendingPathComponent(name) }

    @Test("a voice note in M4A: the text on standard output; verbose_json with words inside the clip; vtt and srt captions")
    func formats() async throws {
        let clip = Repository.file("samples/clips/marcus-1.m4a").path
        let text = try await CLI.run(["transcribe", clip], in: directory)
        #expect(text.status == 0, "\(text.stderr)")
        #expect(text.stdout.lowercased().hasPrefix("i can get her"), "\(text.stdout)")

        let verbose = try await CLI.run(["transcribe", clip, "--format", "verbose_json", "-o", "marcus.json"], in: directory)
        #expect(verbose.status == 0 && verbose.stdout.isEmpty, "\(verbose.stderr)")
        let json = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: file("marcus.json"))) as? [String: Any])
        let duration = try AudioProbe.probe(URL(fileURLWithPath: clip)).duration
        #expect(json["task"] as? String == "transcribe" && json["language"] as? String == "english")
        #expect(abs((json["duration"] as? Double ?? 0) - duration) < 0.01)
        let words = try #require(json["words"] as? [[String: Any]])
        #expect(words.count >= 5 && (words.first?["word"] as? String)?.lowercased() == "i", "\(words)")
        let starts = words.compactMap { $0["start"] as? Double }
        let ends = words.compactMap { $0["end"] as? Double }
        #expect(starts == starts.sorted() && starts.allSatisfy { $0 >= 0 } && ends.allSatisfy { $0 <= duration + 0.05 })
        #expect((json["segments"] as? [[String: Any]])?.isEmpty == false)
        #expect((json["text"] as? String)?.lowercased().hasPrefix("i can get her") == true)

        let vtt = try await CLI.run(["transcribe", clip, "--format", "vtt", "-o", "marcus.vtt"], in: directory)
        #expect(vtt.status == 0, "\(vtt.stderr)")
        let captions = try String(contentsOf: file("marcus.vtt"), encoding: .utf8)
        #expect(captions.hasPrefix("WEBVTT\n\n1\n00:00:0") && captions.contains(" --> "), "\(captions)")
        let srt = try await CLI.run(["transcribe", clip, "--format", "srt"], in: directory)
        #expect(srt.stdout.hasPrefix("1\n00:00:0") && srt.stdout.contains(",") && !srt.stdout.contains("WEBVTT"), "\(srt.stdout)")
    }

    @Test("not audio, a missing file and an unknown model are errors naming them; an existing output is left alone")
    func errors() async throws {
        try Data("not audio at all\n".utf8).write(to: file("note.m4a"))
        try Data("existing".utf8).write(to: file("out.txt"))
        let notAudio = try await CLI.run(["transcribe", "note.m4a", "-o", "out.txt"], in: directory)
        #expect(notAudio.status == 1 && notAudio.stderr.hasPrefix("chorus: error: ") && notAudio.stderr.contains("note.m4a"), "\(notAudio.stderr)")
        #expect(try String(contentsOf: file("out.txt"), encoding: .utf8) == "existing")

        let missing = try await CLI.run(["transcribe", "nowhere.ogg"], in: directory)
        #expect(missing.status == 1 && missing.stderr.contains("nowhere.ogg"), "\(missing.stderr)")

        var environment = ProcessInfo.processInfo.environment
        environment["CHORUS_MODELS_DIR"] = directory.path
        let noModel = try await CLI.run(["transcribe", Repository.file("samples/clips/dad-1.ogg").path], in: directory, environment: environment)
        #expect(
            noModel.status == 1 && noModel.stderr.contains("no model \"whisper-tiny.en\" in \(directory.path)")
                && noModel.stderr.contains("scripts/setup.sh"), "\(noModel.stderr)")

        let badFormat = try await CLI.run(["transcribe", "note.m4a", "--format", "mp3"], in: directory)
        #expect(badFormat.status == 64 && badFormat.stderr.contains("--format"), "\(badFormat.stderr)")
    }

    @Test("chorus align: every word of the text timed as written, captions per sentence; a missing or empty text file is named")
    func align() async throws {
        let clip = Repository.file("samples/clips/marcus-1.m4a").path
        try Data("I can get her.\nI'm leaving work at four anyway.\n".utf8).write(to: file("marcus.txt"))
        let json = try await CLI.run(["align", clip, "--text", "marcus.txt", "-o", "aligned.json"], in: directory)
        #expect(json.status == 0, "\(json.stderr)")
        let aligned = try JSONDecoder().decode(Transcription.self, from: Data(contentsOf: file("aligned.json")))
        #expect(aligned.words?.map(\.word) == ["I", "can", "get", "her", "I'm", "leaving", "work", "at", "four", "anyway"])
        #expect(aligned.text == "I can get her. I'm leaving work at four anyway." && aligned.segments?.count == 2)
        let vtt = try await CLI.run(["align", clip, "--text", "marcus.txt", "--format", "vtt"], in: directory)
        #expect(
            vtt.stdout.hasPrefix("WEBVTT\n\n1\n00:00:00.000 --> ") && vtt.stdout.contains("\nI'm leaving work at four anyway.\n"), "\(vtt.stdout)")

        let missing = try await CLI.run(["align", clip, "--text", "nowhere.txt"], in: directory)
        #expect(missing.status == 1 && missing.stderr.contains("nowhere.txt: cannot read the text file"), "\(missing.stderr)")
        try Data(" ... \n".utf8).write(to: file("empty.txt"))
        let empty = try await CLI.run(["align", clip, "--text", "empty.txt"], in: directory)
        #expect(empty.status == 1 && empty.stderr.contains("empty.txt: no words"), "\(empty.stderr)")
        let text = try await CLI.run(["align", clip, "--text", "marcus.txt", "--format", "text"], in: directory)
        #expect(text.status == 64 && text.stderr.contains("--format"), "\(text.stderr)")
    }

    @Test("chorus render: a recorded message without text is transcribed, the sample conversation's texts are aligned; --no-transcribe leaves both")
    func render() async throws {
        let clips = Repository.file("samples/clips")
        try Data(
            #"""
            {"messages": [{"speaker": "Marcus", "audio": "\#(clips.path)/marcus-1.m4a"},
                          {"speaker": "Dad", "audio": "\#(clips.path)/dad-1.ogg", "text": "I'll stop at the store on the way home."}]}
            """#.utf8
        ).write(to: file("chat.json"))
        let rendered = try await CLI.run(
            ["render", "chat.json", "-o", "chat.wav", "--timeline", "chat.timeline.json", "--captions", "chat.vtt"], in: directory)
        #expect(rendered.status == 0 && !rendered.stderr.contains("warning"), "\(rendered.stderr)")
        let timeline = try JSONDecoder().decode(Timeline.self, from: Data(contentsOf: file("chat.timeline.json")))
        let heard = timeline.segments[0]
        // The render hears Marcus's recording in one window with Dad's (consecutive recordings share windows), where
        // tiny.en hears its "her" as "there" (alone: "her"), so the words are bounded, not fixed.
        #expect(heard.transcribed == true && (heard.text ?? "").lowercased().hasPrefix("i can get"), "\(heard)")
        #expect((heard.words?.count ?? 0) >= 8)
        #expect(timeline.segments[1].words?.map(\.word) == ["I'll", "stop", "at", "the", "store", "on", "the", "way", "home"])
        #expect(try String(contentsOf: file("chat.vtt"), encoding: .utf8).contains(heard.text ?? "?"))

        let plain = try await CLI.run(["render", "chat.json", "-o", "plain.wav", "--timeline", "plain.json", "--no-transcribe"], in: directory)
        #expect(plain.status == 0, "\(plain.stderr)")
        let untouched = try JSONDecoder().decode(Timeline.self, from: Data(contentsOf: file("plain.json")))
        #expect(untouched.segments.allSatisfy { $0.words == nil && $0.transcribed == nil })
        #expect(untouched.segments.map(\.text) == [nil, "I'll stop at the store on the way home."])
        // The audio is the same either way: words are read from it, never written into it.
        #expect(try Data(contentsOf: file("chat.wav")) == Data(contentsOf: file("plain.wav")))

        // Chapter titles: what was heard where the format takes titles at the end (MP3's ID3 tag keeps room for them,
        // MP4 writes them last), the speaker's name in Ogg's header, written before the message is heard.
        try #require(Referee.available, "ffmpeg/ffprobe (the referee) is not installed")
        let written = ChapterTitle.make(speaker: "Dad", text: "I'll stop at the store on the way home.")
        for (name, first) in [
            ("chat.mp3", ChapterTitle.make(speaker: "Marcus", text: heard.text)),
            ("chat.m4a", ChapterTitle.make(speaker: "Marcus", text: heard.text)),
            ("chat.ogg", "Marcus"),
        ] {
            let chaptered = try await CLI.run(["render", "chat.json", "-o", name, "--chapters"], in: directory)
            #expect(chaptered.status == 0, "\(chaptered.stderr)")
            let titles = try await Referee.chapters(file(name)).map(\.title)
            #expect(titles == [first, written], "\(name)")
        }
        #expect(ChapterTitle.make(speaker: "Marcus", text: heard.text).hasPrefix("Marcus: I can get"))
    }
}
