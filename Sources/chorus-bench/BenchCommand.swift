import ArgumentParser
import ChorusAudio
import ChorusCommandLine
import ChorusConversation
import ChorusFixtures
import ChorusSpeech
import Foundation

@main
struct BenchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "chorus-bench",
        abstract: "Time a synthetic mixed-format conversation render; optionally against the ffmpeg CLI and pydub.",
        discussion: """
            Builds a conversation of generated voices (MP3 22.05/24 kHz, AAC/M4A 44.1 kHz stereo and 24 kHz, WAV 16 and \
            44.1 kHz) — or, with --corpus speech, of espeak-ng voices speaking family-chat messages (MP3 44.1 and \
            24 kHz, AAC/M4A 44.1 kHz stereo, WAV 16 kHz) —, renders it --runs times (44.1 kHz mono, with timeline) and reports the median wall time, × real \
            time, peak memory and CPU time per stage. With --compare the same job also runs through the ffmpeg command \
            line (ffprobe for durations, then aresample + apad + concat + loudnorm in one filter graph) and through \
            pydub, when they are installed, and the ratios are printed.

            Example:
              chorus-bench --messages 50 --format mp3 --compare
              chorus-bench --corpus speech --messages 1000
            """)

    @Option(parsing: .unconditional, help: "Messages in the conversation.")
    var messages = 50

    @Option(
        help:
            "Clips: tone (generated speech-like tones in six formats) or speech (espeak-ng voices speaking family-chat messages, in MP3 44.1 and 24 kHz, AAC stereo and WAV 16 kHz)."
    )
    var corpus = "tone"

    @Option(help: "Output format: mp3, wav, flac, aiff, m4a or ogg.")
    var format = "mp3"

    @Option(parsing: .unconditional, help: "Renders per tool; the median is reported.")
    var runs = 3

    @Option(parsing: .unconditional, help: "Messages processed, and MP3 or AAC pieces encoded, in parallel (default: the number of cores).")
    var jobs: Int?

    @Flag(name: .customLong("serial-encode"), help: "Encode MP3 or M4A with one encoder from start to end (the parallel encoder's reference).")
    var serialEncode = false

    @Flag(help: "Also run the job through the ffmpeg command line and pydub.")
    var compare = false

    @Flag(
        help:
            "Produce the program: a jingle before and after the messages and a looped music bed ducked under speech (Chorus's music, intro and outro; the ffmpeg CLI's amix + sidechaincompress + loudnorm; pydub's overlay with gain_during_overlay). Chorus is also timed without the bed. With --synthesis-latency: the first streamed audio with and without a bed."
    )
    var music = false

    @Option(help: "Keep the generated clips and outputs in this folder (default: a temporary folder, removed).")
    var keep: String?

    @Option(parsing: .unconditional, help: "MP3 encoder quality 0–9 for all tools.")
    var quality = RenderOptions.defaultMP3Quality

    @Option(
        name: .customLong("synthesis-latency"), parsing: .unconditional,
        help:
            "Instead of recorded clips, render text messages through a local stub TTS provider that answers after this many seconds (measures synthesis and rendering overlapping)."
    )
    var synthesisLatency: Double?

    @Option(parsing: .unconditional, help: "With --synthesis-latency: provider requests in flight at once.")
    var concurrency = Chorus.Configuration.defaultProviderConcurrency

    @Option(
        name: .customLong("message-text"), parsing: .unconditional,
        help:
            "With --synthesis-latency: what each message says after \"Message N:\" (default: \"the practice moved to half past four, and dinner is at seven tonight.\", 5.4 s of espeak-ng speech)."
    )
    var messageText = "the practice moved to half past four, and dinner is at seven tonight."

    @Flag(
        help:
            "Also render with words (recorded messages heard by the offline Whisper model and their texts aligned): with an empty transcript cache, then with every transcript cached — against the same render without words and the peers."
    )
    var words = false

    @Option(
        name: .customLong("voice-speed"),
        help: "Instead, time each offline voice (Flite and espeak-ng defaults) speaking every text of this conversation file, one message at a time.")
    var voiceSpeed: String?

    func validate() throws {
        if !(1...20_000).contains(messages) { throw ValidationError("--messages \(messages): must be between 1 and 20000") }
        if !["tone", "speech"].contains(corpus) { throw ValidationError("--corpus \(corpus): use tone or speech") }
        if let jobs, !RenderOptions.jobsRange.contains(jobs) { throw ValidationError("--jobs \(jobs): must be between 1 and 64") }
        if !(1...50).contains(runs) { throw ValidationError("--runs \(runs): must be between 1 and 50") }
        if OutputFileFormat(fileExtension: format) == nil {
            throw ValidationError("--format \(format): use mp3, wav, flac, aiff, m4a or ogg")
        }
        if !RenderOptions.mp3QualityRange.contains(quality) { throw ValidationError("--quality \(quality): must be between 0 and 9") }
        if messageText.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty || messageText.count > 2_000 {
            throw ValidationError("--message-text: must say something, in at most 2,000 characters")
        }
        if let synthesisLatency, !(0...60).contains(synthesisLatency) {
            throw ValidationError("--synthesis-latency \(synthesisLatency): must be between 0 and 60 seconds")
        }
        if (synthesisLatency != nil || voiceSpeed != nil) && compare { throw ValidationError("--compare needs recorded clips") }
    }

    func run() async throws {
        if let voiceSpeed {
            return try await reportingErrors { try await benchVoices(URL(fileURLWithPath: voiceSpeed)) }
        }
        if let synthesisLatency {
            return try await reportingErrors { try await benchSynthesis(latency: synthesisLatency) }
        }
        try await reportingErrors {
            let fileFormat = OutputFileFormat(fileExtension: format)!
            let directory: URL
            if let keep {
                directory = URL(fileURLWithPath: keep)
                try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            } else {
                directory = FileManager.default.temporaryDirectory.appendingPathComponent("chorus-bench-\(UUID().uuidString.prefix(8))")
                try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            }
            defer { if keep == nil { try? FileManager.default.removeItem(at: directory) } }

            Terminal.status("Generating \(messages) messages…")
            let synthetic =
                corpus == "speech"
                ? try SyntheticConversation.write(speech: try await speechPool(), messages: messages, in: directory)
                : try SyntheticConversation.write(messages: messages, in: directory)
            var conversation = try Conversation.load(from: synthetic.conversationURL)
            let produced = music ? try Self.writeMusic(in: directory) : nil
            if let produced {
                let jingle = Conversation.Audio.file(directory.appendingPathComponent(produced.jingle), label: produced.jingle)
                conversation.intro = Conversation.Message(speaker: "", audio: jingle)
                conversation.outro = Conversation.Message(speaker: "", audio: jingle)
                conversation.music = MusicBed(source: .file(directory.appendingPathComponent(produced.bed)), label: produced.bed)
            }
            Terminal.endStatus()

            var options = RenderOptions()
            options.mp3Quality = quality
            if let jobs { options.jobs = jobs }
            options.serialEncode = serialEncode
            // The peers only stitch: recorded messages are not transcribed here, so the figures compare the same work.
            var engineConfiguration = Chorus.Configuration(cacheDirectory: directory.appendingPathComponent("cache"))
            engineConfiguration.transcriber = .off
            let engine = try Chorus(configuration: engineConfiguration)
            var chorusRuns: [(wall: Double, memory: Int, result: RenderResult)] = []
            for run in 1...runs {
                Terminal.status("chorus render \(run)/\(runs)…")
                Memory.resetPeak()
                let started = Date()
                let result = try await engine.render(
                    conversation, options: options,
                    to: RenderOutputs(
                        audio: directory.appendingPathComponent("chorus.\(format)"),
                        timeline: directory.appendingPathComponent("chorus.timeline.json"))
                ).result()
                chorusRuns.append((Date().timeIntervalSince(started), Memory.peakBytes(), result))
            }
            Terminal.endStatus()
            let chorus = chorusRuns.sorted { $0.wall < $1.wall }[chorusRuns.count / 2]
            let audioSeconds = chorus.result.timeline.duration
            // The same job without the bed (intro and outro kept): what the bed costs.
            var withoutBed: Double?
            if music {
                var plain = conversation
                plain.music = nil
                var walls: [Double] = []
                for run in 1...runs {
                    Terminal.status("chorus render without the bed \(run)/\(runs)…")
                    let started = Date()
                    _ = try await engine.render(
                        plain, options: options,
                        to: RenderOutputs(
                            audio: directory.appendingPathComponent("chorus-no-bed.\(format)"),
                            timeline: directory.appendingPathComponent("chorus-no-bed.timeline.json"))
                    ).result()
                    walls.append(Date().timeIntervalSince(started))
                }
                Terminal.endStatus()
                withoutBed = walls.sorted()[walls.count / 2]
            }

            var peers: [(name: String, wall: Double?, note: String)] = []
            if compare {
                let job = PeerJob(
                    conversation: conversation, clips: synthetic.messageClips, directory: directory,
                    format: fileFormat, bitRate: options.bitRate, quality: quality, music: produced)
                for peer in [Peer.ffmpegCLI, Peer.pydub] {
                    guard peer.isAvailable else {
                        peers.append((peer.name, nil, "not installed (\(peer.installHint))"))
                        continue
                    }
                    var times: [Double] = []
                    var failure: String?
                    for run in 1...runs {
                        Terminal.status("\(peer.name) \(run)/\(runs)…")
                        do { times.append(try peer.run(job)) } catch {
                            failure = "\(error)"
                            break
                        }
                    }
                    Terminal.endStatus()
                    if let failure {
                        peers.append((peer.name, nil, "failed: \(failure)"))
                    } else {
                        peers.append((peer.name, times.sorted()[times.count / 2], peer.note(music: music)))
                    }
                }
            }
            report(
                synthetic: synthetic, chorus: chorus, audioSeconds: audioSeconds, peers: peers, fileFormat: fileFormat,
                bitRate: options.bitRate)
            if words {
                try await benchWords(conversation, options: options, format: format, directory: directory, without: chorus.wall, peers: peers)
            }
            if let withoutBed {
                print(
                    String(
                        format: "\n  with the bed %.2f s, without it %.2f s: the bed costs %.2f×",
                        chorus.wall, withoutBed, chorus.wall / withoutBed))
                var outputs = [("chorus", "chorus.\(format)")]
                if compare { outputs += [("ffmpeg CLI", "ffmpeg.\(format)"), ("pydub", "pydub.\(format)")] }
                for (name, file) in outputs {
                    let url = directory.appendingPathComponent(file)
                    guard FileManager.default.fileExists(atPath: url.path),
                        let decoded = try? AudioFileReader(url: url).readAll(), let meter = try? LoudnessMeter(format: decoded.format)
                    else { continue }
                    try decoded.samples.withUnsafeBufferPointer { try meter.add($0) }
                    let loudness = try meter.integratedLoudness() ?? -.infinity
                    print(String(format: "  %@: program %.1f LUFS, true peak %.1f dBTP (libebur128)", name, loudness, try meter.truePeak()))
                }
            }
            if keep != nil { print("\nFiles kept in \(directory.path)") }
        }
    }

    /// A 3 s jingle (a rising arpeggio) and a 20 s bed (a chord with a little noise), stereo MP3s.
    static func writeMusic(in directory: URL) throws -> (jingle: String, bed: String) {
        let format = AudioFormat(sampleRate: 44_100, channels: 2)
        func chord(_ frequencies: [Double], seconds: Double, amplitude: Double) -> AudioBuffer {
            var sum = SignalGenerator.silence(seconds: seconds, format: format)
            for frequency in frequencies {
                let tone = SignalGenerator.tone(frequency: frequency, amplitude: amplitude, seconds: seconds, format: format)
                for index in sum.samples.indices { sum.samples[index] += tone.samples[index] }
            }
            return sum
        }
        let jingle = SignalGenerator.concatenate([262, 330, 392, 523].map { chord([$0, $0 * 1.5], seconds: 0.75, amplitude: 0.25) })
        var bed = chord([110, 165, 220, 277], seconds: 20, amplitude: 0.12)
        var random = SplitMix(seed: 3)
        for index in bed.samples.indices { bed.samples[index] += Float(0.02 * (2 * random.next() - 1)) }
        try ClipEncoding.mp3.write(jingle, to: directory.appendingPathComponent("jingle.mp3"))
        try ClipEncoding.mp3.write(bed, to: directory.appendingPathComponent("bed.mp3"))
        return ("jingle.mp3", "bed.mp3")
    }

    /// The speech corpus's distinct clips: espeak-ng's default voices (one per speaker) speaking the corpus texts,
    /// at most 48 (a longer conversation repeats them; every message is still decoded and processed).
    private func speechPool() async throws -> [(speaker: String, text: String, audio: AudioBuffer)] {
        let speakers = ["Sarah", "Marcus", "Aisha", "Dad", "Maya"]
        let espeak = EspeakProvider()
        var pool: [(speaker: String, text: String, audio: AudioBuffer)] = []
        for index in 0..<min(messages, 48) {
            let text = SyntheticConversation.speechTexts[index % SyntheticConversation.speechTexts.count]
            let voice = EspeakProvider.defaultVoices[index % speakers.count]
            let speech = try await espeak.synthesize(SynthesisRequest(voice: voice, text: text, outputFormat: "pcm"))
            guard case .pcm(let buffer) = speech.audio else {
                throw AudioError(.unsupportedFormat, subject: "espeak-ng", reason: "returned encoded audio instead of PCM")
            }
            pool.append((speakers[index % speakers.count], text, buffer))
        }
        return pool
    }

    /// Text messages through a stub provider with `latency` seconds per request: how much of the
    /// rendering hides behind synthesis. The floor is the provider's own time: ⌈messages / concurrency⌉ × latency.
    /// The stub answers with real speech (espeak-ng's, made before the clock starts), so that the words a render hears
    /// in it cost what they cost on what users send.
    private func benchSynthesis(latency: Double) async throws {
        let texts = (0..<messages).map { "Message \($0 + 1): \(messageText)" }
        Terminal.status("Speaking \(texts.count) messages for the stub provider…")
        let espeak = EspeakProvider()
        var spoken: [String: Data] = [:]
        for text in Set(texts) {
            let speech = try await espeak.synthesize(SynthesisRequest(voice: "en-us", text: text, outputFormat: "pcm"))
            guard case .pcm(let buffer) = speech.audio else {
                throw AudioError(.unsupportedFormat, subject: "espeak-ng", reason: "returned encoded audio instead of PCM")
            }
            spoken[text] = try StubSpeech.pcm16(buffer)
        }
        let answers = spoken
        let server = try StubSpeech.openAIServer(latency: latency) { answers[$0] }
        defer { server.stop() }
        let conversation = Conversation(
            messages: texts.enumerated().map { index, text in
                Conversation.Message(
                    speaker: ["Sarah", "Marcus", "Aisha", "Dad"][index % 4], text: text, voice: VoiceID(provider: "openai", voice: "nova"))
            }, name: "synthesis bench")
        var walls: [Double] = []
        var withoutWords: [Double] = []
        var wordsOnly: [Double] = []
        var last: RenderResult?
        for run in 1...runs {
            // OpenAI's voices give no word times: by default their texts are aligned to the speech (words); with --words
            // each run is also made without words, alternating, and the same conversation is rendered again with its
            // speech cached but not its words (what a change of recognizer costs).
            for words in self.words ? [true, false] : [true] {
                let directory = try TemporaryDirectory(prefix: "chorus-bench")
                let chorus = try synthesisEngine(server: server, cache: directory.file("cache"), words: words)
                Terminal.status("chorus render \(run)/\(runs) through a \(latency) s stub provider\(words ? "" : ", no words")…")
                let started = Date()
                let result = try await chorus.render(conversation, to: RenderOutputs(audio: directory.file("out.\(format)"))).result()
                if words {
                    last = result
                    walls.append(Date().timeIntervalSince(started))
                } else {
                    withoutWords.append(Date().timeIntervalSince(started))
                }
                guard words && self.words else { continue }
                try FileManager.default.removeItem(at: TranscriptCache.folder(in: directory.file("cache")))
                let again = try synthesisEngine(server: server, cache: directory.file("cache"), words: true)
                Terminal.status("chorus render \(run)/\(runs) again, its speech cached, its words not…")
                let restarted = Date()
                _ = try await again.render(conversation, to: RenderOutputs(audio: directory.file("again.\(format)"))).result()
                wordsOnly.append(Date().timeIntervalSince(restarted))
            }
        }
        // With --music: the render streamed as MP3 from a cold cache, with and without a bed, alternating: when the first
        // audio leaves.
        var firstAudio: [Bool: [Double]] = [:]
        if music {
            let directory = try TemporaryDirectory(prefix: "chorus-bench")
            let produced = try Self.writeMusic(in: directory.url)
            let bed = MusicBed(source: .file(directory.file(produced.bed)), label: produced.bed)
            for run in 1...runs {
                for withBed in [false, true] {
                    var streamed = conversation
                    streamed.music = withBed ? bed : nil
                    let chorus = try synthesisEngine(server: server, cache: directory.file("cache-\(run)-\(withBed)"))
                    Terminal.status("chorus render streamed \(run)/\(runs)\(withBed ? " with the bed" : "")…")
                    var outputs = RenderOutputs(format: .mp3, keepAudioInMemory: false)
                    let stream = AudioChunkStream()
                    outputs.stream = stream
                    let started = Date()
                    let reader = Task { () throws -> Double? in
                        var first: Double?
                        for try await _ in stream where first == nil { first = Date().timeIntervalSince(started) }
                        return first
                    }
                    _ = try await chorus.render(streamed, to: outputs).result()
                    if let first = try await reader.value { firstAudio[withBed, default: []].append(first) }
                }
            }
        }
        Terminal.endStatus()
        let wall = walls.sorted()[walls.count / 2]
        let rounds = (messages + concurrency - 1) / concurrency
        let floor = Double(rounds) * latency
        print("chorus-bench: \(messages) text messages through a stub provider answering after \(latency) s, \(concurrency) requests in flight")
        print(
            String(
                format: "  wall %.2f s (median of %d), floor %.2f s (%d rounds of requests); %.2f s beyond the floor",
                wall, runs, floor, rounds, wall - floor))
        if let last {
            let timed = last.timeline.segments.filter { $0.words?.isEmpty == false }.count
            print("  output: \(formatDuration(last.timeline.duration)) of audio, \(last.timeline.segments.count) messages, \(timed) with words")
        }
        if !withoutWords.isEmpty {
            let plain = withoutWords.sorted()[withoutWords.count / 2]
            print(String(format: "  without words (--no-transcribe): %.2f s; words cost %.2f s (%.2f×)", plain, wall - plain, wall / plain))
        }
        if !wordsOnly.isEmpty {
            print(
                String(format: "  again with the speech cached, not the words: %.2f s (median of %d)", wordsOnly.sorted()[wordsOnly.count / 2], runs))
        }
        if let plain = firstAudio[false], let bed = firstAudio[true], !plain.isEmpty, !bed.isEmpty {
            print(
                String(
                    format: "  streamed MP3, cold cache: first audio after %.3f s without a bed, %.3f s with one (median of %d)",
                    plain.sorted()[plain.count / 2], bed.sorted()[bed.count / 2], runs))
        }
    }

    /// An engine whose OpenAI provider is the stub `server`.
    private func synthesisEngine(server: StubServer, cache: URL, words: Bool = true) throws -> Chorus {
        var configuration = Chorus.Configuration(
            registry: VoiceRegistry(providers: [OpenAIProvider(baseURL: server.baseURL + "/v1", apiKey: "bench-key")]),
            cacheDirectory: cache)
        configuration.providerConcurrency = concurrency
        if !words { configuration.transcriber = .off }
        return try Chorus(configuration: configuration)
    }

    /// Synthesis speed of each offline voice on one core: seconds of speech per second of work.
    private func benchVoices(_ url: URL) async throws {
        let texts = try Conversation.load(from: url).messages.compactMap(\.text)
        print("chorus-bench: offline voices speaking the \(texts.count) texts of \(url.lastPathComponent), one at a time (median of \(runs))")
        let providers: [String: any VoiceProvider] = ["flite": FliteProvider(), "espeak": EspeakProvider()]
        let voices =
            FliteProvider.defaultVoices.map { VoiceID(provider: "flite", voice: $0) } + [VoiceID(provider: "flite", voice: "kal")]
            + EspeakProvider.defaultVoices.prefix(4).map { VoiceID(provider: "espeak", voice: $0) }
        for voice in voices {
            var walls: [Double] = []
            var audio = 0.0
            for _ in 1...runs {
                audio = 0
                let started = Date()
                for text in texts {
                    let speech = try await providers[voice.provider]!.synthesize(
                        SynthesisRequest(voice: voice.voice, text: text, outputFormat: "pcm"))
                    if case .pcm(let buffer) = speech.audio { audio += buffer.duration }
                }
                walls.append(Date().timeIntervalSince(started))
            }
            let wall = walls.sorted()[walls.count / 2]
            print(
                "  " + voice.description.padding(toLength: 40, withPad: " ", startingAt: 0)
                    + String(format: "%6.1f s of speech in %5.2f s: %5.0f× real time", audio, wall, audio / wall))
        }
    }

    /// The same render with words: a fresh transcript cache per run (the model loaded in the first only), then one
    /// with every transcript cached.
    private func benchWords(
        _ conversation: Conversation, options: RenderOptions, format: String, directory: URL, without: Double,
        peers: [(name: String, wall: Double?, note: String)]
    ) async throws {
        func render(cache: URL) async throws -> (Double, RenderResult) {
            var configuration = Chorus.Configuration(cacheDirectory: cache)
            configuration.transcriber = .automatic
            let engine = try Chorus(configuration: configuration)
            let started = Date()
            let result = try await engine.render(
                conversation, options: options,
                to: RenderOutputs(
                    audio: directory.appendingPathComponent("chorus-words.\(format)"),
                    timeline: directory.appendingPathComponent("chorus-words.timeline.json"))
            ).result()
            return (Date().timeIntervalSince(started), result)
        }
        var cold: [Double] = []
        var cached: [Double] = []
        var heard = 0
        for run in 1...runs {
            Terminal.status("chorus render with words, empty transcript cache \(run)/\(runs)…")
            let (wall, result) = try await render(cache: directory.appendingPathComponent("words-cache-\(run)"))
            cold.append(wall)
            heard = result.timeline.segments.filter { $0.words?.isEmpty == false }.count
        }
        for run in 1...runs {
            Terminal.status("chorus render with words, every transcript cached \(run)/\(runs)…")
            cached.append(try await render(cache: directory.appendingPathComponent("words-cache-1")).0)
        }
        Terminal.endStatus()
        let (coldWall, cachedWall) = (cold.sorted()[cold.count / 2], cached.sorted()[cached.count / 2])
        print("")
        print(
            String(
                format: "  with words (%d of %d messages timed): %.2f s with an empty transcript cache (the first run loads the model: %.2f s),",
                heard, conversation.messages.count, coldWall, cold[0]))
        print(
            String(
                format: "    %.2f s with every transcript cached (%.2f× the render without words, %.2f s)", cachedWall, cachedWall / without, without)
        )
        for peer in peers {
            guard let wall = peer.wall else { continue }
            print(
                String(
                    format: "    %@ (no words): %.2f s — with words, chorus is %.1f× faster cold and %.1f× cached", peer.name, wall, wall / coldWall,
                    wall / cachedWall))
        }
    }

    private func report(
        synthetic: SyntheticConversation, chorus: (wall: Double, memory: Int, result: RenderResult),
        audioSeconds: Double, peers: [(name: String, wall: Double?, note: String)],
        fileFormat: OutputFileFormat, bitRate: Int
    ) {
        let timeline = chorus.result.timeline
        let encoding = fileFormat.isLossy ? " \(bitRate / 1000) kbit/s" : ""
        print("chorus-bench: \(messages) messages, \(synthetic.speakers.count) voices (\(synthetic.formatSummary))")
        let encoders =
            fileFormat == .mp3 || fileFormat == .m4a
            ? (serialEncode || (music && fileFormat == .m4a) ? ", one encoder" : ", pieces on \(jobs ?? RenderOptions.defaultJobs) jobs") : ""
        print(
            "output: \(fileFormat.rawValue) \(timeline.sampleRate) Hz \(timeline.channels == 1 ? "mono" : "stereo")\(encoding)\(encoders)"
                + " + timeline, \(formatDuration(audioSeconds)) of audio; median of \(runs) run\(runs == 1 ? "" : "s") per tool")
        print("")
        func row(_ name: String, _ wall: String, _ speed: String, _ memory: String) {
            print(
                "  " + name.padding(toLength: 16, withPad: " ", startingAt: 0)
                    + wall.leftPadded(10) + speed.leftPadded(14) + memory.leftPadded(14))
        }
        row("", "wall", "× real time", "peak memory")
        row(
            "chorus render", String(format: "%.2f s", chorus.wall), String(format: "%.0f×", audioSeconds / chorus.wall),
            String(format: "%.0f MB", Double(chorus.memory) / 1_048_576))
        for peer in peers {
            if let wall = peer.wall {
                row(peer.name, String(format: "%.2f s", wall), String(format: "%.0f×", audioSeconds / wall), "—")
            } else {
                print("  " + peer.name.padding(toLength: 16, withPad: " ", startingAt: 0) + peer.note)
            }
        }
        let measured = peers.filter { $0.wall != nil }
        if !measured.isEmpty {
            print("")
            let ratios = measured.map { String(format: "%.1f× faster than %@", $0.wall! / chorus.wall, $0.name) }
            print("  chorus render is " + ratios.joined(separator: " and ") + ".")
            for peer in measured where !peer.note.isEmpty { print("  (\(peer.name): \(peer.note))") }
        }
        let timings = chorus.result.timings
        print("")
        print("  chorus CPU time per stage (summed over parallel workers):")
        print("    " + Stage.allCases.map { String(format: "%@ %.2f s", $0.rawValue, timings[$0]) }.joined(separator: ", "))
        if timings[.encode] > 0 {
            print(
                String(
                    format: "    wall time is %.2f× the encoder's CPU time (with one encoder, the floor; pieces in parallel go below it)",
                    chorus.wall / timings[.encode]))
        }
        print(String(format: "    loudness %.3f s of CPU per 5 minutes of audio", timings[.loudness] * 300 / audioSeconds))
        print(String(format: "    %.1f ms per message", chorus.wall * 1000 / Double(messages)))
    }
}

extension String {
    func leftPadded(_ width: Int) -> String {
        count >= width ? self : String(repeating: " ", count: width - count) + self
    }
}

/// This process's peak resident memory (Linux `VmHWM`), resettable between runs.
enum Memory {
    static func resetPeak() {
        // Writing 5 to clear_refs resets the peak RSS counter (Linux ≥ 4.0).
        if let handle = FileHandle(forWritingAtPath: "/proc/self/clear_refs") {
            handle.write(Data("5".utf8))
            try? handle.close()
        }
    }

    static func peakBytes() -> Int {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }),
            let kilobytes = Int(line.split(separator: " ").dropFirst().first ?? "")
        else { return 0 }
        return kilobytes * 1024
    }
}
