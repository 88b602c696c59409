import ChorusAudio
import ChorusConversation
import ChorusFixtures
import ChorusTestSupport
import Foundation
import Testing

@testable import ChorusSpeech
@testable import ChorusWire

/// A conversation of generated voices in mixed formats and rates, each padded with silence. Its "voices" are
/// speech-like signals, not speech: it is rendered without a speech recognizer (`RecordedSpeechTests` renders speech).
struct FixtureConversation {
    let directory: TemporaryDirectory
    let conversationURL: URL
    let conversation: Conversation

    static let clips: [(speaker: String, encoding: ClipEncoding, rate: Int, channels: Int, seconds: Double, level: Double)] = [
        ("Sarah", .mp3, 24_000, 1, 1.6, 0.5),
        ("Marcus", .m4a, 44_100, 2, 1.2, 0.08),
        ("Aisha", .wav16, 16_000, 1, 1.4, 0.9),
        ("Sarah", .flac, 48_000, 2, 0.9, 0.3),
        ("Dad", .opus, 48_000, 1, 1.1, 0.2),
        ("Marcus", .aiff, 22_050, 1, 1.0, 0.02),
    ]

    init(gapMs: Int? = nil) throws {
        directory = try TemporaryDirectory()
        var messages: [String] = []
        for (index, clip) in Self.clips.enumerated() {
            let format = AudioFormat(sampleRate: clip.rate, channels: clip.channels)
            let voice = SignalGenerator.concatenate([
                SignalGenerator.silence(seconds: 0.2 + 0.05 * Double(index), format: format),
                SignalGenerator.speechLike(
                    fundamental: 110 + 30 * Double(index), seconds: clip.seconds, format: format,
                    seed: UInt64(index + 1), amplitude: clip.level),
                SignalGenerator.silence(seconds: 0.3, format: format),
            ])
            let name = "clip\(index).\(clip.encoding.fileExtension)"
            try clip.encoding.write(voice, to: directory.file(name))
            messages.append(#"{"speaker": "\#(clip.speaker)", "audio": "\#(name)", "text": "Message \#(index) <ok> & done"}"#)
        }
        let gap = gapMs.map { "\"gap_ms\": \($0), " } ?? ""
        conversationURL = try directory.write("{\(gap)\"messages\": [\(messages.joined(separator: ","))]}", to: "conversation.json")
        conversation = try Conversation.load(from: conversationURL)
    }

    func render(
        to name: String, options: RenderOptions = RenderOptions(), timeline: Bool = true,
        waveform: String? = nil, captions: Bool = false, gapMilliseconds: Int? = nil
    ) async throws -> RenderResult {
        let outputs = RenderOutputs(
            audio: directory.file(name),
            timeline: timeline ? directory.file(name + ".timeline.json") : nil,
            waveform: waveform.map { directory.file($0) },
            captions: captions ? directory.file(name + ".vtt") : nil)
        var conversation = self.conversation
        if let gapMilliseconds { conversation.gapMilliseconds = gapMilliseconds }
        let chorus = try Chorus(configuration: Self.configuration(cache: directory.file("cache")))
        return try await chorus.render(conversation, options: options, to: outputs).result()
    }

    /// An engine for these signals: no speech recognizer.
    static func configuration(cache: URL) -> Chorus.Configuration {
        var configuration = Chorus.Configuration(cacheDirectory: cache)
        configuration.transcriber = .off
        return configuration
    }
}

@Suite("Rendering conversations")
struct RenderTests {
    @Test("gaps are exactly 300 ms of digital silence, measured speech to speech")
    func exactGaps() async throws {
        let fixture = try FixtureConversation()
        let result = try await fixture.render(to: "out.wav")
        let timeline = result.timeline
        let wav = try WAVReference.read(fixture.directory.file("out.wav"))
        #expect(wav.sampleRate == 44_100 && wav.channels == 1)
        #expect(wav.samples.count == timeline.samples)
        let gap = 13_230
        let margin = AudioFormat.speech.frames(milliseconds: 25)
        for (previous, next) in zip(timeline.segments, timeline.segments.dropFirst()) {
            #expect(next.startSample - previous.endSample == gap)
            #expect(wav.samples[previous.endSample..<next.startSample].allSatisfy { $0 == 0 }, "gap before message \(next.index) is not silent")
            // Speech ends within the 25 ms margin of the segment's end and starts within it after the gap.
            let lastSound = wav.samples[previous.startSample..<previous.endSample].lastIndex { abs($0) > 30 }!
            let firstSound = wav.samples[next.startSample..<next.endSample].firstIndex { abs($0) > 30 }!
            #expect(previous.endSample - lastSound <= margin + 1)
            #expect(firstSound - next.startSample <= margin + 1)
        }
        #expect(timeline.segments.first?.startSample == 0)
        #expect(timeline.segments.last?.endSample == timeline.samples)
    }

    @Test("a message's own gap_ms: longer, or negative to cut in before the previous one ends — exact to the sample, under the true-peak ceiling")
    func messageGaps() async throws {
        let fixture = try FixtureConversation()
        var conversation = fixture.conversation
        conversation.messages[2].gapMilliseconds = 900
        conversation.messages[3].gapMilliseconds = -400
        conversation.messages[5].gapMilliseconds = -60_000
        let outputs = RenderOutputs(audio: fixture.directory.file("gaps.flac"), timeline: fixture.directory.file("gaps.json"))
        let chorus = try Chorus(configuration: FixtureConversation.configuration(cache: fixture.directory.file("cache")))
        let result = try await chorus.render(conversation, options: RenderOptions(), to: outputs).result()
        let segments = result.timeline.segments
        #expect(segments[1].startSample - segments[0].endSample == 13_230)
        #expect(segments[2].startSample - segments[1].endSample == 39_690)
        #expect(segments[3].startSample == segments[2].endSample - 17_640)
        #expect(segments[4].startSample - segments[3].endSample == 13_230)
        // Reaching back further than message 4 lasts: it starts with message 4, and says so.
        #expect(segments[5].startSample == segments[4].startSample)
        #expect(result.warnings.contains { $0.contains("messages[5]") && $0.contains("gap_ms -60000") }, "\(result.warnings)")
        #expect(result.timeline.samples == max(segments[4].endSample, segments[5].endSample))
        // What a decoder reads back: the file's length, and libebur128's true peak under the ceiling where voices add up.
        let decoded = try AudioFileReader(url: fixture.directory.file("gaps.flac")).readAll()
        #expect(decoded.frameCount == result.timeline.samples)
        let overlap = decoded.frames(segments[3].startSample..<segments[2].endSample)
        #expect(try referenceLoudness(overlap).truePeak <= -1, "overlap of messages 2 and 3")
        #expect(try referenceLoudness(decoded).truePeak <= -1)
        // Both voices are in the overlap: it is the end of message 2 plus the start of message 3 as they sound alone.
        let plain = try await fixture.render(to: "plain.flac").timeline.segments
        let alone = try AudioFileReader(url: fixture.directory.file("plain.flac")).readAll()
        let end2 = alone.frames((plain[2].endSample - 17_640)..<plain[2].endSample).samples
        let start3 = alone.frames(plain[3].startSample..<(plain[3].startSample + 17_640)).samples
        let sum = zip(end2, start3).map { Double($0 + $1) }
        func rms(_ values: [Double]) -> Double { (values.reduce(0) { $0 + $1 * $1 } / Double(max(1, values.count))).squareRoot() }
        let difference = zip(overlap.samples, sum).map { Double($0) - $1 }
        #expect(rms(difference) < 0.2 * rms(sum) && rms(sum) > 0.01, "\(rms(difference)) vs \(rms(sum))")
        // A gap out of range is refused naming the message's field, before any work.
        var absurd = fixture.conversation
        absurd.messages[1].gapMilliseconds = -70_000
        let error = await #expect(throws: AudioError.self) {
            _ = try await chorus.render(absurd, options: RenderOptions(), to: RenderOutputs(audio: fixture.directory.file("absurd.wav"))).result()
        }
        #expect(error?.subject == "messages[1].gap_ms", "\(String(describing: error))")
        #expect(!FileManager.default.fileExists(atPath: fixture.directory.file("absurd.wav").path))
        let parsed = #expect(throws: ConversationError.self) {
            try Conversation.parse(
                Data(#"{"messages": [{"speaker": "A", "text": "Hi"}, {"speaker": "B", "text": "Yo", "gap_ms": 90000}]}"#.utf8),
                baseDirectory: fixture.directory.url, name: "c.json")
        }
        #expect(parsed?.description.contains("messages[1].gap_ms") == true, "\(String(describing: parsed))")
    }

    @Test("an intro clip and a spoken outro: placed the gap before the first and after the last message, in the timeline and chapters")
    func introAndOutro() async throws {
        let fixture = try FixtureConversation()
        var conversation = fixture.conversation
        conversation.intro = Conversation.Message(speaker: "", audio: .file(fixture.directory.file("clip2.wav"), label: "clip2.wav"))
        conversation.outro = Conversation.Message(speaker: "Host", text: "That was the news.", voice: VoiceID("espeak:en-us"))
        var options = RenderOptions()
        options.chapters = true
        let outputs = RenderOutputs(audio: fixture.directory.file("show.mp3"), timeline: fixture.directory.file("show.json"))
        let chorus = try Chorus(configuration: FixtureConversation.configuration(cache: fixture.directory.file("cache")))
        let result = try await chorus.render(conversation, options: options, to: outputs).result()
        let timeline = result.timeline
        let intro = try #require(timeline.intro)
        let outro = try #require(timeline.outro)
        #expect(intro.startSample == 0 && intro.speaker == nil && intro.source == "clip2.wav" && intro.words == nil)
        #expect(timeline.segments.count == 6 && timeline.segments.map(\.index) == Array(0..<6))
        #expect(timeline.segments[0].startSample == intro.endSample + 13_230)
        #expect(outro.startSample == timeline.segments[5].endSample + 13_230 && outro.endSample == timeline.samples)
        #expect(outro.speaker == "Host" && outro.text == "That was the news." && outro.voice == "espeak:en-us")
        #expect(outro.words?.map(\.word) == ["That", "was", "the", "news"])
        #expect(!timeline.speakers.contains { $0.name == "Host" }, "speakers list the messages' talk time")
        let captions = WebVTT.captions(for: timeline)
        #expect(captions.hasSuffix("<v Host>That was the news.\n") && captions.contains("\n7\n"), "\(captions)")
        // The timeline file says the same, and a decoder reads the whole program back.
        let file = try JSONDecoder().decode(Timeline.self, from: Data(contentsOf: fixture.directory.file("show.json")))
        #expect(file.intro == intro && file.outro == outro)
        #expect(try AudioFileReader(url: fixture.directory.file("show.mp3")).readAll().frameCount == timeline.samples)
        // Chapters: Intro, one per message, then the outro's line (ffprobe reads them).
        let probe = try await ToolRun.run(["ffprobe", "-v", "error", "-show_chapters", "-of", "json", fixture.directory.file("show.mp3").path])
        let chapters = try #require(try JSONSerialization.jsonObject(with: Data(probe.output.utf8)) as? [String: Any])["chapters"] as? [[String: Any]]
        let titles = chapters?.compactMap { ($0["tags"] as? [String: Any])?["title"] as? String } ?? []
        #expect(titles.count == 8 && titles.first == "Intro" && titles.last?.hasPrefix("Host: That was the news") == true, "\(titles)")
        // A spoken intro needs its speaker; an intro needs a clip or a line.
        for (raw, field) in [(#"{"text": "Hello"}"#, "intro.speaker"), (#"{}"#, "intro")] {
            let error = #expect(throws: ConversationError.self) {
                try Conversation.parse(
                    Data(#"{"intro": \#(raw), "messages": [{"speaker": "A", "text": "Hi"}]}"#.utf8),
                    baseDirectory: fixture.directory.url, name: "c.json")
            }
            #expect(error?.description.contains(field) == true, "\(String(describing: error))")
        }
    }

    @Test(
        "a music bed from a conversation file: under the whole program with an intro and outro, the program at the preset (FFmpeg's ebur128), messages where they were"
    )
    func musicBed() async throws {
        let fixture = try FixtureConversation()
        // A chord with a little noise, 2.5 s long: looped under the program.
        let format = AudioFormat(sampleRate: 44_100, channels: 2)
        var chord = SignalGenerator.tone(frequency: 196, amplitude: 0.2, seconds: 2.5, format: format)
        for frequency in [247.0, 294.0] {
            let tone = SignalGenerator.tone(frequency: frequency, amplitude: 0.15, seconds: 2.5, format: format)
            for index in chord.samples.indices { chord.samples[index] += tone.samples[index] }
        }
        try ClipEncoding.mp3.write(chord, to: fixture.directory.file("bed.mp3"))
        let text = try String(contentsOf: fixture.conversationURL, encoding: .utf8)
        let produced = text.replacingOccurrences(
            of: "{\"messages\"",
            with: """
                {"loudness_preset": "podcast", "intro": {"audio": "clip2.wav"}, "outro": {"audio": "clip4.ogg"},
                 "music": {"audio": "bed.mp3", "level_lu": -18, "duck_db": 10, "fade_in_ms": 1000, "fade_out_ms": 2000}, "messages"
                """)
        let conversation = try Conversation.parse(Data(produced.utf8), baseDirectory: fixture.directory.url, name: "produced.json")
        let bed = try #require(conversation.music)
        #expect(bed.label == "bed.mp3" && bed.levelLU == -18 && bed.duckDB == 10 && bed.loop)
        let chorus = try Chorus(configuration: FixtureConversation.configuration(cache: fixture.directory.file("cache")))
        let file = fixture.directory.file("produced.flac")
        let result = try await chorus.render(conversation, options: RenderOptions(), to: RenderOutputs(audio: file)).result()
        let plain = try await fixture.render(to: "plain.flac")
        let timeline = result.timeline
        let music = try #require(timeline.music)
        #expect(music.startSample == 0 && music.endSample == timeline.samples && music.source == "bed.mp3" && music.passes >= 4)
        #expect(music.levelLU == -18 && music.duckDB == 10)
        let outro = try #require(timeline.outro)
        #expect(timeline.samples == outro.endSample + 88_200, "a 2 s tail after the outro for the fade-out")
        // The messages keep their lengths and spacing.
        let shift = timeline.segments[0].startSample - plain.timeline.segments[0].startSample
        for (with, without) in zip(timeline.segments, plain.timeline.segments) {
            #expect(with.startSample - shift == without.startSample && with.endSample - shift == without.endSample)
        }
        #expect(try AudioFileReader(url: file).readAll().frameCount == timeline.samples)
        // The whole program, speech and music, at the preset as the program without the bed is (FFmpeg's meter; these
        // one-second messages 300 ms apart measure a little under what each does alone, the preset test's tolerance),
        // the bed adding little, and under the ceiling.
        let measured = try await Referee.ebur128(file)
        let plainMeasured = try await Referee.ebur128(fixture.directory.file("plain.flac"))
        #expect(
            abs(measured.integrated - plainMeasured.integrated) <= 0.3, "\(measured.integrated) LUFS, without the bed \(plainMeasured.integrated)")
        #expect(abs(measured.integrated - -16) <= 1, "\(measured.integrated) LUFS")
        #expect(measured.truePeak <= -1.0, "\(measured.truePeak) dBTP")
        // Bad settings name their field.
        for (raw, field) in [
            (#"{"audio": "bed.mp3", "level_lu": 4}"#, "music.level_lu"), (#"{"level_lu": -20}"#, "music.audio"),
            (#"{"audio": "bed.mp3", "duck_db": 99}"#, "music.duck_db"), (#"{"audio": ""}"#, "music.audio"),
        ] {
            let error = #expect(throws: ConversationError.self) {
                try Conversation.parse(
                    Data(#"{"music": \#(raw), "messages": [{"speaker": "A", "text": "Hi"}]}"#.utf8),
                    baseDirectory: fixture.directory.url, name: "c.json")
            }
            #expect(error?.description.contains(field) == true, "\(String(describing: error))")
        }
        // A bed that does not decode fails the render naming it, and leaves no file behind.
        try Data(repeating: 7, count: 3_000).write(to: fixture.directory.file("broken.mp3"))
        var broken = conversation
        broken.music?.source = .file(fixture.directory.file("broken.mp3"))
        broken.music?.label = "broken.mp3"
        let failed = fixture.directory.file("failed.flac")
        await #expect(throws: AudioError.self) {
            _ = try await chorus.render(broken, options: RenderOptions(), to: RenderOutputs(audio: failed)).result()
        }
        #expect(!FileManager.default.fileExists(atPath: failed.path))
    }

    @Test(
        "cleanup in a conversation file: a recorded note with a long pause is cleaned and shortened; a message can opt out; bad settings name their field"
    )
    func cleanup() async throws {
        let fixture = try FixtureConversation()
        let format = AudioFormat(sampleRate: 44_100, channels: 1)
        var note = SignalGenerator.concatenate([
            SignalGenerator.speechLike(fundamental: 150, seconds: 1.5, format: format, seed: 4),
            SignalGenerator.silence(seconds: 2, format: format),
            SignalGenerator.speechLike(fundamental: 150, seconds: 1.5, format: format, seed: 5),
        ])
        var random = SplitMix(seed: 1)
        for index in note.samples.indices { note.samples[index] += Float(0.01 * (2 * random.next() - 1)) }
        try ClipEncoding.wav16.write(note, to: fixture.directory.file("note.wav"))
        func render(_ json: String) async throws -> Timeline {
            let conversation = try Conversation.parse(Data(json.utf8), baseDirectory: fixture.directory.url, name: "c.json")
            let chorus = try Chorus(configuration: FixtureConversation.configuration(cache: fixture.directory.file("cache")))
            return try await chorus.render(conversation, options: RenderOptions(), to: RenderOutputs(audio: fixture.directory.file("c.wav"))).result()
                .timeline
        }
        let messages = #"[{"speaker": "Mom", "audio": "note.wav"}, {"speaker": "Dad", "audio": "note.wav", "cleanup": false}]"#
        let cleaned = try await render(#"{"cleanup": {"max_silence_ms": 500}, "messages": \#(messages)}"#)
        let plain = try await render(#"{"messages": \#(messages)}"#)
        let length = { (segment: Timeline.Segment) in Double(segment.endSample - segment.startSample) / 44_100 }
        #expect(
            abs(length(plain.segments[0]) - length(cleaned.segments[0]) - 1.5) < 0.1,
            "the 2 s pause becomes 0.5 s: \(length(plain.segments[0])) s → \(length(cleaned.segments[0])) s")
        #expect(length(cleaned.segments[1]) == length(plain.segments[1]), "the message that opted out is as it was")
        for (raw, field) in [
            (#"{"highpass_hz": 1000}"#, "cleanup.highpass_hz"), (#"{"noise_reduction_db": 50}"#, "cleanup.noise_reduction_db"),
            (#""yes""#, "cleanup"),
        ] {
            let error = #expect(throws: ConversationError.self) {
                try Conversation.parse(
                    Data(#"{"cleanup": \#(raw), "messages": [{"speaker": "A", "text": "Hi"}]}"#.utf8),
                    baseDirectory: fixture.directory.url, name: "c.json")
            }
            #expect(error?.description.contains(field) == true, "\(String(describing: error))")
        }
    }

    @Test(
        "a loudness preset: the whole program at its target and under its ceiling (libebur128); audiobook as ACX measures",
        arguments: LoudnessPreset.allCases)
    func loudnessPreset(preset: LoudnessPreset) async throws {
        let fixture = try FixtureConversation(gapMs: preset == .audiobook ? 800 : nil)
        var conversation = fixture.conversation
        conversation.loudnessPreset = preset
        let file = fixture.directory.file("\(preset.rawValue).flac")
        let chorus = try Chorus(configuration: FixtureConversation.configuration(cache: fixture.directory.file("cache")))
        var options = RenderOptions()
        options.targetLoudness = -30  // the preset wins over the options' target
        _ = try await chorus.render(conversation, options: options, to: RenderOutputs(audio: file)).result()
        let decoded = try AudioFileReader(url: file).readAll()
        let measured = try referenceLoudness(decoded)
        #expect(abs(measured.integrated! - preset.targetLoudness) <= 1, "\(preset): \(measured.integrated!) LUFS")
        #expect(measured.truePeak <= preset.truePeakCeiling, "\(preset): \(measured.truePeak) dBTP")
        guard preset == .audiobook else { return }
        // ACX: RMS of the whole file −23…−18 dB, every sample ≤ −3 dBFS, noise floor (the quietest half second) ≤ −60 dB.
        func decibels(_ value: Double) -> Double { 20 * log10(max(value, 1e-10)) }
        let samples = decoded.samples.map(Double.init)
        let rms = (samples.reduce(0) { $0 + $1 * $1 } / Double(samples.count)).squareRoot()
        let peak = samples.map(abs).max() ?? 0
        let window = decoded.format.sampleRate / 2
        let floor =
            stride(from: 0, to: samples.count - window, by: window / 10).map { start in
                (samples[start..<(start + window)].reduce(0) { $0 + $1 * $1 } / Double(window)).squareRoot()
            }.min() ?? 1
        print("audiobook: RMS \(decibels(rms)) dB, peak \(decibels(peak)) dBFS, floor \(decibels(floor)) dB, \(measured.integrated!) LUFS")
        #expect((-23.0 ... -18.0).contains(decibels(rms)), "RMS \(decibels(rms)) dB")
        #expect(decibels(peak) <= -3, "peak \(decibels(peak)) dBFS")
        #expect(decibels(floor) <= -60, "noise floor \(decibels(floor)) dB")
    }

    @Test("every message is within ±1 LU of the target and its true peak ≤ −1 dBTP", arguments: [-16.0, -23.0])
    func loudnessPerSegment(target: Double) async throws {
        let fixture = try FixtureConversation()
        var options = RenderOptions()
        options.targetLoudness = target
        let result = try await fixture.render(to: "out.flac", options: options)
        let decoded = try AudioFileReader(url: fixture.directory.file("out.flac")).readAll()
        for segment in result.timeline.segments {
            let slice = decoded.frames(segment.startSample..<segment.endSample)
            let measured = try referenceLoudness(slice)
            #expect(abs(measured.integrated! - target) <= 1, "message \(segment.index): \(measured.integrated!) LUFS")
            #expect(measured.truePeak <= -1, "message \(segment.index): \(measured.truePeak) dBTP")
        }
        // The quiet clips needed boosting, the loud one cutting.
        #expect(result.timeline.segments[5].gainDB > 10)
        #expect(result.timeline.segments[2].gainDB < 0)
    }

    @Test("the timeline's length is what a decoder yields from the output", arguments: OutputFileFormat.allCases)
    func timelineMatchesDecodedOutput(format: OutputFileFormat) async throws {
        let fixture = try FixtureConversation(gapMs: 450)
        let name = "out.\(format.rawValue)"
        let result = try await fixture.render(to: name)
        let url = fixture.directory.file(name)
        let timeline = result.timeline
        let decoded = try AudioFileReader(url: url).readAll()
        #expect(decoded.format.sampleRate == timeline.sampleRate)
        try #require(decoded.frameCount == timeline.samples, "\(format): decoded \(decoded.frameCount), timeline \(timeline.samples)")
        #expect(timeline.duration == AudioFormat(sampleRate: timeline.sampleRate, channels: 1).roundedSeconds(frames: timeline.samples))
        #expect(timeline.gapMs == 450)
        if Referee.available {
            // FFmpeg 5.1 ignores the end of MP4 edit lists when decoding, so for M4A the referee is ffprobe's stream length.
            let referee = format == .m4a ? try Referee.streamDurationFrames(url) : try Referee.decodedFrames(url, channels: timeline.channels)
            #expect(referee == timeline.samples, "ffmpeg disagrees for \(format)")
        }
        // Sound where the timeline says speech is, near-silence where it says gap.
        for (previous, next) in zip(timeline.segments, timeline.segments.dropFirst()) {
            let margin = decoded.format.frames(milliseconds: 40)
            let gap = decoded.frames((previous.endSample + margin)..<(next.startSample - margin))
            let speech = decoded.frames(next.startSample..<next.endSample)
            #expect(gap.peak < 0.02, "\(format): gap before \(next.index) peaks at \(gap.peak)")
            #expect(speech.peak > 0.3)
        }
    }

    @Test(
        "MP3 and M4A in pieces encoded in parallel and with one encoder: identical timelines, audio within the codec's noise",
        .enabled(if: Referee.available, "needs ffmpeg as the referee decoder"), arguments: ["mp3", "m4a"])
    func parallelEncodeMatchesSerial(fileExtension: String) async throws {
        let fixture = try FixtureConversation(gapMs: 450)
        var serial = RenderOptions()
        serial.serialEncode = true
        var parallel = RenderOptions()
        parallel.jobs = 3
        let one = try await fixture.render(to: "serial.\(fileExtension)", options: serial)
        let pieces = try await fixture.render(to: "pieces.\(fileExtension)", options: parallel)
        let oneJSON = try Data(contentsOf: fixture.directory.file("serial.\(fileExtension).timeline.json"))
        let piecesJSON = try Data(contentsOf: fixture.directory.file("pieces.\(fileExtension).timeline.json"))
        #expect(oneJSON == piecesJSON)
        let a = try Referee.decodeS16Exact(fixture.directory.file("serial.\(fileExtension)"), channels: 1)
        let b = try Referee.decodeS16Exact(fixture.directory.file("pieces.\(fileExtension)"), channels: 1)
        try #require(a.count == one.timeline.samples && b.count == pieces.timeline.samples)
        #expect(a != b, "the same audio bit for bit: the render was not encoded in pieces")
        // Two encodes of the same PCM differ by codec noise: far below the signal (here < −20 dB).
        #expect(Self.differenceDB(a, b) < -20, "difference \(Self.differenceDB(a, b)) dB")
    }

    /// The energy of `a − b` against `a`'s, in dB.
    static func differenceDB(_ a: [Int16], _ b: [Int16]) -> Double {
        var squares = 0.0
        var energy = 0.0
        for index in a.indices {
            let delta = Double(Int(a[index]) - Int(b[index]))
            squares += delta * delta
            energy += Double(a[index]) * Double(a[index])
        }
        return 10 * log10(squares / energy)
    }

    @Test(
        "MP3 under a music bed (no silence to cut in) encoded in overlapping pieces: the timeline of one encoder, audio within the codec's noise",
        .enabled(if: Referee.available, "needs ffmpeg as the referee decoder"))
    func parallelEncodeUnderBed() async throws {
        let fixture = try FixtureConversation()
        let format = AudioFormat(sampleRate: 44_100, channels: 1)
        var bed = SignalGenerator.tone(frequency: 196, amplitude: 0.2, seconds: 3.3, format: format)
        let fifth = SignalGenerator.tone(frequency: 294, amplitude: 0.15, seconds: 3.3, format: format)
        for index in bed.samples.indices { bed.samples[index] += fifth.samples[index] }
        try ClipEncoding.wavFloat.write(bed, to: fixture.directory.file("bed.wav"))
        var conversation = fixture.conversation
        conversation.music = try RenderRequest.Music(levelLU: -14).bed(.file(fixture.directory.file("bed.wav")), label: "bed.wav")
        conversation.gapMilliseconds = 4_000  // over 25 s: pieces under a bed are 15 s at least
        let chorus = try Chorus(configuration: FixtureConversation.configuration(cache: fixture.directory.file("cache")))
        var serial = RenderOptions()
        serial.serialEncode = true
        var parallel = RenderOptions()
        parallel.jobs = 2
        var results: [RenderResult] = []
        for (name, options) in [("serial", serial), ("pieces", parallel)] {
            let outputs = RenderOutputs(audio: fixture.directory.file("\(name).mp3"), timeline: fixture.directory.file("\(name).json"))
            results.append(try await chorus.render(conversation, options: options, to: outputs).result())
        }
        #expect(try Data(contentsOf: fixture.directory.file("serial.json")) == Data(contentsOf: fixture.directory.file("pieces.json")))
        let samples = results[0].timeline.samples
        #expect(samples > 25 * 44_100)
        let a = try Referee.decodeS16Exact(fixture.directory.file("serial.mp3"), channels: 1)
        let b = try Referee.decodeS16Exact(fixture.directory.file("pieces.mp3"), channels: 1)
        try #require(a.count == samples && b.count == samples, "decoded \(a.count) and \(b.count), timeline \(samples)")
        #expect(!a.contains(where: { $0 == 0 }) || a.filter { $0 == 0 }.count < samples / 100, "the bed leaves no stretch of silence")
        #expect(a != b, "the same audio bit for bit: the render was not encoded in pieces")
        #expect(Self.differenceDB(a, b) < -20, "difference \(Self.differenceDB(a, b)) dB")
    }

    @Test("timeline JSON and captions describe every message")
    func timelineAndCaptions() async throws {
        let fixture = try FixtureConversation()
        let result = try await fixture.render(to: "out.mp3", captions: true)
        let json = try JSONSerialization.jsonObject(with: Data(contentsOf: fixture.directory.file("out.mp3.timeline.json"))) as! [String: Any]
        #expect(json["sample_rate"] as? Int == 44_100)
        #expect(json["gap_ms"] as? Int == 300)
        let segments = json["segments"] as! [[String: Any]]
        #expect(segments.count == 6)
        #expect(segments[1]["speaker"] as? String == "Marcus")
        #expect(segments[1]["source"] as? String == "clip1.m4a")
        #expect(segments[1]["start_sample"] as? Int == result.timeline.segments[1].startSample)
        let speakers = json["speakers"] as! [[String: Any]]
        #expect(speakers.map { $0["name"] as! String } == ["Sarah", "Marcus", "Aisha", "Dad"])
        #expect(speakers[0]["segments"] as? [Int] == [0, 3])

        let vtt = try String(contentsOf: fixture.directory.file("out.mp3.vtt"), encoding: .utf8)
        #expect(vtt.hasPrefix("WEBVTT\n"))
        #expect(vtt.contains("<v Marcus>Message 1 &lt;ok&gt; &amp; done"))
        let second = result.timeline.segments[1]
        #expect(vtt.contains("\(WebVTT.timestamp(second.start)) --> \(WebVTT.timestamp(second.end))"))
    }

    @Test(
        "render --waveform equals audiowaveform's computation on the rendered WAV",
        arguments: [
            (WaveformZoom.samplesPerPixel(256), 16), (.samplesPerPixel(512), 8), (.pixelsPerSecond(100), 8), (.pixelsPerSecond(33), 16),
        ])
    func renderPeaks(zoom: WaveformZoom, bits: Int) async throws {
        let fixture = try FixtureConversation()
        var options = RenderOptions()
        options.waveform = WaveformOptions(zoom: zoom, bits: bits)
        _ = try await fixture.render(to: "out.wav", options: options, waveform: "peaks.json")
        let wav = try WAVReference.read(fixture.directory.file("out.wav"))
        let samplesPerPixel = try zoom.samplesPerPixel(sampleRate: 44_100)
        var expected = audiowaveformReference(wav.samples, channels: 1, samplesPerPixel: samplesPerPixel)
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

    @Test("--no-trim and --no-normalize keep clips as they are")
    func passthrough() async throws {
        let fixture = try FixtureConversation()
        var options = RenderOptions()
        options.trimSilence = false
        options.normalize = false
        let result = try await fixture.render(to: "out.wav", options: options)
        let first = result.timeline.segments[0]
        // clip0: 0.2 s + 1.6 s + 0.3 s at 24 kHz → 2.1 s at 44.1 kHz.
        #expect(abs((first.endSample - first.startSample) - 92_610) <= 1)
        #expect(result.timeline.segments.allSatisfy { $0.gainDB == 0 })
    }

    @Test("stereo output at 48 kHz")
    func stereo() async throws {
        let fixture = try FixtureConversation()
        var options = RenderOptions()
        options.channels = 2
        options.sampleRate = 48_000
        let result = try await fixture.render(to: "out.m4a", options: options)
        let decoded = try AudioFileReader(url: fixture.directory.file("out.m4a")).readAll()
        #expect(decoded.format == AudioFormat(sampleRate: 48_000, channels: 2))
        try #require(decoded.frameCount == result.timeline.samples)
        #expect(result.timeline.segments[1].startSample - result.timeline.segments[0].endSample == 14_400)
    }
}

@Suite("Bad input never crashes, never leaves a partial file, never clobbers")
struct RenderFailureTests {
    static var original: Data { Data("an existing output file".utf8) }

    /// Renders a two-message conversation whose second clip is `bad`, expecting `code`.
    func expectFailure(_ code: AudioError.Code, clip: (TemporaryDirectory) throws -> String, mentioning: [String]) async throws {
        let directory = try TemporaryDirectory()
        try ClipEncoding.wav16.write(
            SignalGenerator.tone(frequency: 440, amplitude: 0.5, seconds: 1, format: .speech), to: directory.file("good.wav"))
        let bad = try clip(directory)
        let conversation = try directory.write(
            #"{"messages": [{"speaker": "A", "audio": "good.wav"}, {"speaker": "B", "audio": "\#(bad)"}]}"#,
            to: "c.json")
        let output = directory.file("out.mp3")
        try Self.original.write(to: output)
        await expectAudioError(code, mentioning: ["messages[1]", bad] + mentioning) {
            let loaded = try Conversation.load(from: conversation)
            let chorus = try Chorus(configuration: Chorus.Configuration(cacheDirectory: directory.file("cache")))
            _ = try await chorus.render(loaded, to: RenderOutputs(audio: output, timeline: directory.file("t.json"))).result()
        }
        #expect(try Data(contentsOf: output) == Self.original, "the existing output must be untouched")
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: directory.url.path).filter { $0.hasSuffix(".partial") || $0 == "t.json" }
        #expect(leftovers.isEmpty, "left behind: \(leftovers)")
    }

    @Test("empty file") func empty() async throws {
        try await expectFailure(
            .emptyAudio,
            clip: {
                try $0.write("", to: "empty.m4a")
                return "empty.m4a"
            }, mentioning: ["empty"])
    }

    @Test("garbage bytes") func garbage() async throws {
        try await expectFailure(
            .unsupportedFormat,
            clip: {
                try Data((0..<5000).map { UInt8(truncatingIfNeeded: $0 &* 7919 &+ 13) }).write(to: $0.file("noise.wav"))
                return "noise.wav"
            }, mentioning: ["not a recognised audio file"])
    }

    @Test("text file named .mp3") func textAsMP3() async throws {
        try await expectFailure(
            .unsupportedFormat,
            clip: {
                try $0.write(String(repeating: "hello there\n", count: 200), to: "readme.mp3")
                return "readme.mp3"
            }, mentioning: [])
    }

    @Test("truncated MP3") func truncated() async throws {
        try await expectFailure(
            .truncated,
            clip: { directory in
                let url = directory.file("whole.mp3")
                try ClipEncoding.mp3.write(SignalGenerator.tone(frequency: 440, amplitude: 0.5, seconds: 3, format: .speech), to: url)
                let bytes = try Data(contentsOf: url)
                try bytes.prefix(bytes.count / 3).write(to: directory.file("cut.mp3"))
                return "cut.mp3"
            }, mentioning: ["truncated"])
    }

    @Test("missing file") func missing() async throws {
        try await expectFailure(.fileNotFound, clip: { _ in "nowhere.mp3" }, mentioning: ["no such file"])
    }

    @Test(
        "absurd parameters are refused before any work",
        arguments: [
            ("sampleRate", 0), ("gap", -5), ("loudness", 3), ("bitrate", 1_000), ("channels", 7), ("gap", 999_999),
        ])
    func absurdParameters(parameter: String, value: Int) async throws {
        let fixture = try FixtureConversation()
        var options = RenderOptions()
        var gap: Int?
        let field: String
        switch parameter {
        case "sampleRate":
            options.sampleRate = value
            field = "sample_rate"
        case "gap":
            gap = value
            field = "gap_ms"
        case "loudness":
            options.targetLoudness = Double(value)
            field = "loudness"
        case "bitrate":
            options.bitRate = value
            field = "bitrate"
        default:
            options.channels = value
            field = "channels"
        }
        let output = fixture.directory.file("out.mp3")
        try Self.original.write(to: output)
        await expectAudioError(.invalidArgument, mentioning: ["\(field) \(value)"]) {
            _ = try await fixture.render(to: "out.mp3", options: options, gapMilliseconds: gap)
        }
        #expect(try Data(contentsOf: output) == Self.original)
    }

    @Test("an unknown output extension is refused")
    func unknownExtension() async throws {
        let fixture = try FixtureConversation()
        await expectAudioError(.invalidArgument, mentioning: ["out.xyz", ".mp3"]) { _ = try await fixture.render(to: "out.xyz") }
    }
}
