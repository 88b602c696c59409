import ChorusAudio
import ChorusConversation
import ChorusFixtures
import ChorusTestSupport
import Foundation
import Testing

@testable import ChorusText
@testable import ChorusWire

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
#if canImport(Glibc)
import Glibc
#endif

/// The commands that read and write files: render, speak, voices, probe, waveform, player, and Ctrl-C.
@Suite("The chorus command")
struct CLITests {
    /// The suite's scratch folder, removed with the suite's instance (each test has its own).
    let folder: TemporaryDirectory
    var directory: URL { folder.url }

    init() throws {
        folder = try TemporaryDirectory(prefix: "chorus-cli")
        let format = AudioFormat(sampleRate: 22_050, channels: 1)
        for (index, encoding) in [ClipEncoding.mp3, .m4a].enumerated() {
            let voice = SignalGenerator.concatenate([
                SignalGenerator.silence(seconds: 0.2, format: format),
                SignalGenerator.speechLike(fundamental: 150 + 50 * Double(index), seconds: 1.2, format: format, seed: UInt64(index)),
                SignalGenerator.silence(seconds: 0.2, format: format),
            ])
            try encoding.write(voice, to: directory.appendingPathComponent("clip\(index).\(encoding.fileExtension)"))
        }
        try Data(#"{"messages": [{"speaker": "Sarah", "audio": "clip0.mp3", "text": "Hi"}, {"speaker": "Marcus", "audio": "clip1.m4a"}]}"#.utf8)
            .write(to: directory.appendingPathComponent("chat.json"))
    }

    func file(_ name: String) -> URL { directory.appendingPathComponent(name) }

    @Test("render writes audio, timeline, waveform and captions and says so")
    func render() async throws {
        // The clips are speech-like signals, not speech: nothing to transcribe (chorus transcribe's tests render speech).
        let result = try await CLI.run(
            [
                "render", "chat.json", "-o", "out.mp3", "--timeline", "out.json", "--waveform", "out.dat",
                "--bits", "8", "--captions", "out.vtt", "--no-transcribe",
            ], in: directory)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("Wrote out.mp3"))
        let timeline = try JSONSerialization.jsonObject(with: Data(contentsOf: file("out.json"))) as! [String: Any]
        let probe = try AudioProbe.probe(file("out.mp3"))
        #expect(timeline["samples"] as? Int == probe.samples)
        #expect(try Data(contentsOf: file("out.dat")).count > 20)
        #expect(try String(contentsOf: file("out.vtt"), encoding: .utf8).contains("<v Marcus>Marcus"))
    }

    @Test(
        "a render's waveform is its audio's as decoded: render --waveform equals chorus waveform on the file written, lossy or not",
        arguments: ["mp3", "m4a", "ogg", "wav"])
    func waveformOfTheFile(format: String) async throws {
        let rendered = try await CLI.run(
            ["render", "chat.json", "-o", "out.\(format)", "--waveform", "render.json", "--pixels-per-second", "100"],
            in: directory)
        #expect(rendered.status == 0, "\(rendered.stderr)")
        let measured = try await CLI.run(["waveform", "out.\(format)", "-o", "file.json", "--pixels-per-second", "100"], in: directory)
        #expect(measured.status == 0, "\(measured.stderr)")
        #expect(try Data(contentsOf: file("render.json")) == Data(contentsOf: file("file.json")))
    }

    @Test("render --chapters writes one chapter per message (ffprobe reads them); without it, none")
    func chapters() async throws {
        try #require(Referee.available, "ffmpeg/ffprobe (the referee) is not installed")
        let result = try await CLI.run(["render", "chat.json", "-o", "out.m4a", "--timeline", "out.json", "--chapters"], in: directory)
        #expect(result.status == 0, "\(result.stderr)")
        let chapters = try await Referee.chapters(file("out.m4a"))
        #expect(chapters.map(\.title) == ["Sarah: Hi", "Marcus"])
        let timeline = try JSONSerialization.jsonObject(with: Data(contentsOf: file("out.json"))) as! [String: Any]
        let second = (timeline["segments"] as! [[String: Any]])[1]["start"] as! Double
        #expect(chapters.count == 2 && abs(chapters[1].start - second) <= 0.0005)
        #expect(try await CLI.run(["render", "chat.json", "-o", "plain.m4a"], in: directory).status == 0)
        #expect(try await Referee.chapters(file("plain.m4a")).isEmpty)
    }

    @Test(
        "absurd parameters are usage errors (exit 64) naming the option",
        arguments: [
            (["--sample-rate", "0"], "--sample-rate 0"), (["--gap-ms", "-5"], "--gap-ms -5"), (["--channels", "3"], "--channels 3"),
            (["--loudness", "12"], "--loudness 12"), (["--bits", "12"], "--bits 12"), (["--samples-per-pixel", "1"], "--samples-per-pixel 1"),
            (["--loudness-preset", "loud"], "--loudness-preset loud"), (["--loudness-preset", "podcast", "--loudness", "-20"], "give one"),
            (["--intro", ""], "--intro: name an audio file"),
            (["--music", " "], "--music: name an audio file"),
        ])
    func absurd(arguments: [String], mention: String) async throws {
        try Data("existing".utf8).write(to: file("out.mp3"))
        let result = try await CLI.run(["render", "chat.json", "-o", "out.mp3"] + arguments, in: directory)
        #expect(result.status == 64)
        #expect(result.stderr.contains(mention), "\(result.stderr)")
        #expect(try String(contentsOf: file("out.mp3"), encoding: .utf8) == "existing")
    }

    @Test("--music plays a bed under the program: the timeline's music spans it, with the tail the fade-out takes")
    func music() async throws {
        let result = try await CLI.run(
            [
                "render", "chat.json", "-o", "music.wav", "--timeline", "music.json", "--music", "clip1.m4a",
                "--cleanup", "--no-transcribe",
            ], in: directory)
        #expect(result.status == 0, "\(result.stderr)")
        let timeline = try JSONDecoder().decode(Timeline.self, from: Data(contentsOf: file("music.json")))
        let music = try #require(timeline.music)
        #expect(music.source == "clip1.m4a" && music.startSample == 0 && music.endSample == timeline.samples && music.levelLU == -20)
        #expect(timeline.samples == timeline.segments[1].endSample + 3 * 44_100, "the default 3 s fade-out tail")
        #expect(try AudioFileReader(url: file("music.wav")).readAll().frameCount == timeline.samples)
        let missing = try await CLI.run(["render", "chat.json", "-o", "none.wav", "--music", "nowhere.mp3"], in: directory)
        #expect(missing.status == 1 && missing.stderr.contains("music.audio (nowhere.mp3)"), "\(missing.stderr)")
        #expect(!FileManager.default.fileExists(atPath: file("none.wav").path))
    }

    @Test("a bad clip fails with exit 1, names the message and file, and leaves the existing output alone")
    func badClip() async throws {
        try Data("not audio at all\n".utf8).write(to: file("broken.mp3"))
        try Data(#"{"messages": [{"speaker": "A", "audio": "clip0.mp3"}, {"speaker": "B", "audio": "broken.mp3"}]}"#.utf8)
            .write(to: file("bad.json"))
        try Data("existing".utf8).write(to: file("out.mp3"))
        let result = try await CLI.run(["render", "bad.json", "-o", "out.mp3", "--timeline", "out.json"], in: directory)
        #expect(result.status == 1)
        #expect(result.stderr.hasPrefix("chorus: error: messages[1] (B): "))
        #expect(result.stderr.contains("broken.mp3"))
        #expect(!result.stderr.contains("Fatal") && !result.stderr.contains("Stack"))
        #expect(try String(contentsOf: file("out.mp3"), encoding: .utf8) == "existing")
        #expect(!FileManager.default.fileExists(atPath: file("out.json").path))
    }

    @Test("zero messages is an error naming the file")
    func zeroMessages() async throws {
        try Data(#"{"messages": []}"#.utf8).write(to: file("empty.json"))
        let result = try await CLI.run(["render", "empty.json", "-o", "out.wav"], in: directory)
        #expect(result.status == 1)
        #expect(result.stderr.contains("empty.json: messages: must not be empty"))
    }

    @Test("probe --json reports the exact decoded length")
    func probe() async throws {
        let result = try await CLI.run(["probe", "clip1.m4a", "--json"], in: directory)
        #expect(result.status == 0)
        let json = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as! [String: Any]
        #expect(json["codec"] as? String == "aac")
        #expect(json["samples"] as? Int == 35_280)
    }

    @Test("waveform writes audiowaveform JSON")
    func waveform() async throws {
        let result = try await CLI.run(["waveform", "clip0.mp3", "-o", "w.json", "--pixels-per-second", "50", "--bits", "8"], in: directory)
        #expect(result.status == 0, "\(result.stderr)")
        let json = try JSONSerialization.jsonObject(with: Data(contentsOf: file("w.json"))) as! [String: Any]
        #expect(json["samples_per_pixel"] as? Int == 441)
        #expect(json["bits"] as? Int == 8)
    }
}

@Suite("The chorus command with voices")
struct VoiceCLITests {
    /// The suite's scratch folder, removed with the suite's instance (each test has its own).
    let folder: TemporaryDirectory
    var directory: URL { folder.url }

    init() throws {
        folder = try TemporaryDirectory(prefix: "chorus-cli-voices")
        try Data(#"{"messages": [{"speaker": "Ann", "text": "Practice moved to 4:30."}, {"speaker": "Ben", "text": "On my way."}]}"#.utf8)
            .write(to: directory.appendingPathComponent("text.json"))
    }

    @Test("a text conversation renders offline; the second render comes from the cache")
    func textRender() async throws {
        let arguments = ["render", "text.json", "-o", "out.wav", "--timeline", "out.json", "--cache-dir", "cache"]
        let first = try await CLI.run(arguments, in: directory)
        #expect(first.status == 0, "\(first.stderr)")
        #expect(first.stdout.contains("Voices: 2 synthesized, 0 from cache, 2 provider requests"))
        let second = try await CLI.run(arguments, in: directory)
        #expect(second.stdout.contains("Voices: 2 synthesized, 2 from cache, 0 provider requests"), "\(second.stdout)")
        let timeline = try JSONSerialization.jsonObject(with: Data(contentsOf: directory.appendingPathComponent("out.json"))) as! [String: Any]
        let segments = timeline["segments"] as! [[String: Any]]
        // Ann and Ben: first names given to a girl and a boy; the first natural voices that sound so (Chorus's own English
        // voices first).
        #expect(
            segments[0]["voice"] as? String == "kokoro:af_linden" && segments[1]["voice"] as? String == "kokoro:am_alder", "\(segments)")
        #expect(segments[0]["voice"] as? String != segments[1]["voice"] as? String)
        #expect((segments[0]["words"] as? [[String: Any]])?.first?["word"] as? String == "Practice")
        // The espeak-ng defaults as before Flite.
        let espeak = try await CLI.run(arguments + ["--voice-engine", "espeak"], in: directory)
        #expect(espeak.status == 0, "\(espeak.stderr)")
        let before = try JSONSerialization.jsonObject(with: Data(contentsOf: directory.appendingPathComponent("out.json"))) as! [String: Any]
        #expect(((before["segments"] as! [[String: Any]])[0]["voice"] as? String)?.hasPrefix("espeak:") == true)
        #expect(try await CLI.run(arguments + ["--voice-engine", "festival"], in: directory).status == 64)
    }

    @Test("a missing key fails naming the message, provider and variable; a fallback voice saves the render")
    func missingKeyAndFallback() async throws {
        try Data(#"{"voices": {"Ben": "openai:nova"}, "messages": [{"speaker": "Ann", "text": "Hi."}, {"speaker": "Ben", "text": "Hello."}]}"#.utf8)
            .write(to: directory.appendingPathComponent("keyed.json"))
        var environment = ProcessInfo.processInfo.environment
        environment["OPENAI_API_KEY"] = nil
        let failed = try await CLI.run(["render", "keyed.json", "-o", "out.mp3", "--cache-dir", "cache"], in: directory, environment: environment)
        #expect(failed.status == 1)
        #expect(failed.stderr.contains("messages[1] (Ben, openai:nova): openai: not configured: OPENAI_API_KEY is not set"))
        #expect(!FileManager.default.fileExists(atPath: directory.appendingPathComponent("out.mp3").path))
        let saved = try await CLI.run(
            [
                "render", "keyed.json", "-o", "out.mp3", "--cache-dir", "cache", "--fallback-voice", "espeak:en-gb",
                "--timeline", "keyed.timeline.json",
            ], in: directory, environment: environment)
        #expect(saved.status == 0, "\(saved.stderr)")
        #expect(try String(contentsOf: directory.appendingPathComponent("keyed.timeline.json"), encoding: .utf8).contains("\"fallback\": true"))
    }

    @Test("speak writes one message; voices lists the default voices")
    func speakAndVoices() async throws {
        let spoken = try await CLI.run(
            ["speak", "Dinner at seven.", "--voice", "espeak:en-us+f3", "-o", "dinner.flac", "--cache-dir", "cache"], in: directory)
        #expect(spoken.status == 0, "\(spoken.stderr)")
        #expect(FileManager.default.fileExists(atPath: directory.appendingPathComponent("dinner.flac").path))
        let voices = try await CLI.run(["voices", "--provider", "espeak", "--json"], in: directory)
        #expect(voices.status == 0)
        let list = try JSONSerialization.jsonObject(with: Data(voices.stdout.utf8)) as! [[String: String]]
        #expect(list.count > 20)
        #expect(list.first?["id"] == "espeak:en-us+m3?pitch=38&rate=165")
    }

    @Test("speak with a lexicon file: the IPA is said (as long as the long name), the written word shown; a bad file names it and writes nothing")
    func speakWithLexicon() async throws {
        try Data(#"{"Bob": {"ipa": "ˌnɛbjʊkədˈnɛzəɹ"}}"#.utf8).write(to: directory.appendingPathComponent("names.json"))
        try Data(#"{"Bob": {"ipa": "b o b"}}"#.utf8).write(to: directory.appendingPathComponent("bad.json"))
        var seconds: [Double] = []
        for (text, extra) in [("See you Bob.", ["--lexicon", "names.json"]), ("See you Nebuchadnezzar.", []), ("See you Bob.", [])] {
            let spoken = try await CLI.run(
                ["speak", text, "--voice", "espeak:en-us", "-o", "said.wav", "--timeline", "said.json", "--cache-dir", "cache"] + extra,
                in: directory)
            #expect(spoken.status == 0, "\(spoken.stderr)")
            let timeline = try JSONSerialization.jsonObject(with: Data(contentsOf: directory.appendingPathComponent("said.json"))) as? [String: Any]
            let segment = try #require((timeline?["segments"] as? [[String: Any]])?.first)
            #expect((segment["words"] as? [[String: Any]])?.last?["word"] as? String == WordAligner.words(in: text).last?.word)
            seconds.append((segment["end"] as? Double ?? 0) - (segment["start"] as? Double ?? 0))
        }
        #expect(abs(seconds[0] - seconds[1]) < 0.05 && seconds[1] - seconds[2] > 0.3, "\(seconds)")
        let bad = try await CLI.run(["speak", "Hi Bob.", "--voice", "espeak:en-us", "-o", "bad.wav", "--lexicon", "bad.json"], in: directory)
        #expect(bad.status == 1 && bad.stderr.contains("bad.json.Bob.ipa") && bad.stderr.contains("not IPA"), "\(bad.stderr)")
        let missing = try await CLI.run(["speak", "Hi Bob.", "--voice", "espeak:en-us", "-o", "bad.wav", "--lexicon", "nothing.json"], in: directory)
        #expect(missing.status == 1 && missing.stderr.contains("nothing.json"), "\(missing.stderr)")
        let emoji = try await CLI.run(["speak", "Hi.", "--voice", "espeak:en-us", "-o", "bad.wav", "--emoji", "say"], in: directory)
        #expect(emoji.status == 1 && emoji.stderr.contains("emoji"), "\(emoji.stderr)")
        #expect(!FileManager.default.fileExists(atPath: directory.appendingPathComponent("bad.wav").path))
    }

    @Test("player writes one page that plays from any folder with no network; bad inputs name the file and write nothing")
    func player() async throws {
        let rendered = try await CLI.run(
            ["render", "text.json", "-o", "out.ogg", "--timeline", "out.json", "--waveform", "out.dat", "--cache-dir", "cache"],
            in: directory)
        #expect(rendered.status == 0, "\(rendered.stderr)")
        let made = try await CLI.run(["player", "out.ogg", "--timeline", "out.json", "-o", "page.html", "--title", "Practice"], in: directory)
        #expect(made.status == 0, "\(made.stderr)")
        let elsewhere = directory.appendingPathComponent("moved/page.html")
        try FileManager.default.createDirectory(at: elsewhere.deletingLastPathComponent(), withIntermediateDirectories: true)
        try FileManager.default.moveItem(at: directory.appendingPathComponent("page.html"), to: elsewhere)
        let report = try await BrowserReferee.check(url: elsewhere.absoluteString, timeline: directory.appendingPathComponent("out.json"))
        #expect(report.resources == 0, "everything is inside the page")
        #expect(report.speakersSeen == ["Ann", "Ben"] && report.wordsSeen == 2)
        #expect(try String(contentsOf: elsewhere, encoding: .utf8).contains("<title>Practice</title>"))
        // Peaks given as a file instead of computed.
        #expect(
            try await CLI.run(["player", "out.ogg", "--timeline", "out.json", "--waveform", "out.dat", "-o", "peaks.html"], in: directory).status == 0
        )

        // A timeline that is not this audio's, a missing file, audio that is not audio, a page name that is not .html.
        #expect(try await CLI.run(["speak", "Hi.", "--voice", "flite:slt", "-o", "short.wav", "--cache-dir", "cache"], in: directory).status == 0)
        let mismatch = try await CLI.run(["player", "short.wav", "--timeline", "out.json", "-o", "bad.html"], in: directory)
        #expect(
            mismatch.status == 1 && mismatch.stderr.contains("out.json") && mismatch.stderr.contains("not this audio's timeline"),
            "\(mismatch.stderr)")
        let missing = try await CLI.run(["player", "out.ogg", "--timeline", "nothing.json", "-o", "bad.html"], in: directory)
        #expect(missing.status == 1 && missing.stderr.contains("nothing.json: no such timeline JSON file"), "\(missing.stderr)")
        let notAudio = try await CLI.run(["player", "out.json", "--timeline", "out.json", "-o", "bad.html"], in: directory)
        #expect(notAudio.status == 1 && notAudio.stderr.contains("is not MP3, WAV, FLAC, AIFF, M4A or Ogg audio"), "\(notAudio.stderr)")
        let notTimeline = try await CLI.run(["player", "out.ogg", "--timeline", "text.json", "-o", "bad.html"], in: directory)
        #expect(notTimeline.status == 1 && notTimeline.stderr.contains("text.json: is not a timeline JSON file"), "\(notTimeline.stderr)")
        #expect(try await CLI.run(["player", "out.ogg", "--timeline", "out.json", "-o", "page.mp3"], in: directory).status == 64)
        #expect(!FileManager.default.fileExists(atPath: directory.appendingPathComponent("bad.html").path))
    }

    @Test(
        "bad voice options are usage errors",
        arguments: [
            ["speak", "Hi", "--voice", "nova", "-o", "x.mp3"], ["voices", "--provider", "acme"],
            ["render", "text.json", "-o", "x.mp3", "--fallback-voice", "espeak"], ["render", "text.json", "-o", "x.mp3", "--concurrency", "0"],
        ])
    func badOptions(arguments: [String]) async throws {
        let result = try await CLI.run(arguments, in: directory)
        #expect(result.status == 64, "\(arguments): \(result.stderr)")
    }
}

@Suite("Interrupting the chorus command")
struct InterruptTests {
    @Test("Ctrl-C during a render leaves no partial file and keeps the existing output")
    func interrupt() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("chorus-cli-int-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let synthetic = try SyntheticConversation.write(messages: 400, in: directory, poolSize: 3)
        try Data("existing".utf8).write(to: directory.appendingPathComponent("out.mp3"))
        let process = Process()
        process.executableURL = CLI.binary
        process.arguments = ["render", synthetic.conversationURL.path, "-o", "out.mp3", "--timeline", "out.json", "--voice-engine", "flite"]
        process.currentDirectoryURL = directory
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        // Interrupted once it is writing (its half-written output exists): a signal that came before the command had
        // installed its handler would be the test's race, not the command's behaviour.
        var writing = false
        for _ in 0..<2400 where !writing && process.isRunning {
            try await Task.sleep(nanoseconds: 50_000_000)
            writing = try FileManager.default.contentsOfDirectory(atPath: directory.path).contains { $0.hasSuffix(".partial") }
        }
        try #require(writing, "the render never started writing")
        process.interrupt()
        let end = await process.exited()
        #expect(end == .exited(130))
        let names = try FileManager.default.contentsOfDirectory(atPath: directory.path)
        #expect(!names.contains { $0.hasSuffix(".partial") }, "\(names)")
        #expect(!names.contains("out.json"))
        #expect(try String(contentsOf: directory.appendingPathComponent("out.mp3"), encoding: .utf8) == "existing")
    }
}
