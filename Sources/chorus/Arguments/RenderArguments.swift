import ArgumentParser
import ChorusAudio
import ChorusCommandLine
import ChorusConversation
import ChorusSpeech
import ChorusSupport
import ChorusWire
import Foundation

/// Output and processing options shared by `render` and `speak`. Defaults and ranges come from
/// `RenderOptions`; out-of-range values are reported by it and mapped to these flags.
struct RenderArguments: ParsableArguments {
    @Option(name: [.short, .customLong("output")], help: "Output audio file (.mp3, .wav, .flac, .aiff, .m4a, .ogg).")
    var output: String

    @Option(help: "Also write the timeline JSON here.")
    var timeline: String?

    @Option(help: "Also write waveform peaks here (.json or .dat, audiowaveform formats).")
    var waveform: String?

    @Option(help: "Also write WebVTT captions here.")
    var captions: String?

    @Option(
        name: .customLong("gap-ms"), parsing: .unconditional,
        help: "Silence between messages in milliseconds (default: the file's gap_ms, else \(RenderOptions.defaultGapMilliseconds)).")
    var gapMs: Int?

    @Option(parsing: .unconditional, help: "Target loudness in LUFS (default \(OrderedJSON.format(RenderOptions.defaultLoudness))).")
    var loudness: Double?

    @Option(
        name: .customLong("loudness-preset"),
        help:
            "Loudness to publish to: \(LoudnessPreset.allCases.map { "\($0.rawValue) (\(OrderedJSON.format($0.targetLoudness)) LUFS, \(OrderedJSON.format($0.truePeakCeiling)) dBTP)" }.joined(separator: ", ")); replaces the file's loudness_preset."
    )
    var loudnessPreset: String?

    @Option(help: "A clip to play before the first message (a jingle), the gap before it; replaces the file's intro.")
    var intro: String?

    @Option(help: "A clip to play after the last message, the gap after it; replaces the file's outro.")
    var outro: String?

    @Option(
        help:
            "Music to play under the whole program, ducked under speech (looped, faded; the file's music settings, else level -20 LU, duck 12 dB); replaces the file's music audio."
    )
    var music: String?

    @Flag(
        help:
            "Clean up every recorded message (high-pass, de-click, de-noise, level, long pauses shortened: FFmpeg's filters); the file's cleanup settings if it has them."
    )
    var cleanup = false

    @Flag(name: .customLong("no-normalize"), help: "Keep each message's own loudness.")
    var noNormalize = false

    @Flag(help: "Write one chapter per message into the file (ID3v2 CHAP in .mp3, the MP4 chapter list in .m4a, CHAPTERxxx comments in .ogg).")
    var chapters = false

    @Flag(name: .customLong("no-trim"), help: "Keep each message's leading and trailing silence.")
    var noTrim = false

    @Flag(
        name: .customLong("no-transcribe"),
        help:
            "Leave recorded messages without words (by default one without text is transcribed and one with text has it aligned, when the offline Whisper model is installed)."
    )
    var noTranscribe = false

    @Option(
        name: .customLong("sample-rate"), parsing: .unconditional,
        help: "Output sample rate in Hz (default \(OutputFileFormat.mp3.defaultSampleRate); \(OutputFileFormat.ogg.defaultSampleRate) for .ogg).")
    var sampleRate: Int?

    @Option(parsing: .unconditional, help: "Output channels: 1 or 2.")
    var channels: Int = RenderOptions().channels

    @Option(help: "Bit rate for .mp3, .m4a and .ogg output.")
    var bitrate: BitRate = BitRate(bitsPerSecond: RenderOptions.defaultBitRate)

    @Option(parsing: .unconditional, help: "MP3 encoder quality, 0 (best) to 9 (fastest).")
    var quality: Int = RenderOptions.defaultMP3Quality

    @Option(
        parsing: .unconditional,
        help: "Messages decoded and normalized in parallel, and MP3 or AAC pieces encoded in parallel (default: the number of cores).")
    var jobs: Int?

    @Flag(
        name: .customLong("serial-encode"),
        help: "Encode MP3 or M4A with one encoder from start to end instead of pieces in parallel (for comparison).")
    var serialEncode = false

    @OptionGroup(title: "Waveform")
    var waveformArguments: WaveformArguments

    @Flag(name: .shortAndLong, help: "Print nothing but errors.")
    var quiet = false

    func validate() throws {
        if OutputFileFormat(fileExtension: URL(fileURLWithPath: output).pathExtension) == nil {
            throw ValidationError("--output \(output): use a .mp3, .wav, .flac, .aiff, .m4a or .ogg file name")
        }
        if let waveform, (try? WaveformFileFormat(url: URL(fileURLWithPath: waveform))) == nil {
            throw ValidationError("--waveform \(waveform): use a .json or .dat file name")
        }
        if loudness != nil && loudnessPreset != nil {
            throw ValidationError("--loudness and --loudness-preset both set the target loudness: give one")
        }
        for (flag, path) in [("--intro", intro), ("--outro", outro), ("--music", music)]
        where path?.trimmingCharacters(in: .whitespaces).isEmpty == true {
            throw ValidationError("\(flag): name an audio file")
        }
        if noNormalize && loudnessPreset != nil {
            throw ValidationError("--no-normalize and --loudness-preset: a preset normalizes; give one")
        }
        try FlagNames.validating {
            if let gapMs { try RenderOptions.validate(gapMilliseconds: gapMs) }
            if let loudnessPreset { _ = try LoudnessPreset(validating: loudnessPreset, field: "loudness_preset") }
            try options.validate(for: try outputs.audioFormat())
        }
    }

    var options: RenderOptions {
        var options = RenderOptions()
        options.sampleRate = sampleRate
        options.channels = channels
        options.normalize = !noNormalize
        options.targetLoudness = loudness ?? RenderOptions.defaultLoudness
        options.trimSilence = !noTrim
        options.chapters = chapters
        options.bitRate = bitrate.bitsPerSecond
        options.mp3Quality = quality
        if let jobs { options.jobs = jobs }
        options.serialEncode = serialEncode
        options.waveform = waveformArguments.options
        if waveform == nil { options.waveform = nil }
        return options
    }

    var outputs: RenderOutputs {
        RenderOutputs(
            audio: URL(fileURLWithPath: output), timeline: timeline.map { URL(fileURLWithPath: $0) },
            waveform: waveform.map { URL(fileURLWithPath: $0) }, captions: captions.map { URL(fileURLWithPath: $0) })
    }

    /// Renders through the library and reports: live progress on a terminal, warnings, then a summary unless quiet.
    func render(_ conversation: Conversation, voices: VoiceArguments) async throws {
        let chorus = try voices.chorus()
        var conversation = conversation
        if let gapMs { conversation.gapMilliseconds = gapMs }
        // The flags win over the file's loudness_preset.
        if let loudnessPreset {
            conversation.loudnessPreset = try LoudnessPreset(validating: loudnessPreset, field: "loudness_preset")
        } else if loudness != nil || noNormalize {
            conversation.loudnessPreset = nil
        }
        if let fallback = voices.fallbackVoice.flatMap(VoiceID.init) { conversation.fallbackVoice = fallback }
        if noTranscribe { conversation.transcribe = false }
        if let intro { conversation.intro = Conversation.Message(speaker: "", audio: .file(URL(fileURLWithPath: intro), label: intro)) }
        if let outro { conversation.outro = Conversation.Message(speaker: "", audio: .file(URL(fileURLWithPath: outro), label: outro)) }
        if cleanup && conversation.cleanup == nil { conversation.cleanup = VoiceCleanup() }
        if let music {
            let audio = Conversation.Audio.file(URL(fileURLWithPath: music), label: music)
            if conversation.music == nil { conversation.music = MusicBed(source: audio.clipSource, label: music) }
            conversation.music?.source = audio.clipSource
            conversation.music?.label = music
        }
        let showProgress = !quiet && Terminal.isInteractive
        let last = Locked<RenderProgress?>(nil)  // the latest progress event, kept for the summary
        let result = try await chorus.render(conversation, options: options, to: outputs).result { event in
            guard case .progress(let progress) = event else { return }
            last.withLock { $0 = progress }
            if showProgress { Terminal.status(Self.describe(progress)) }
        }
        if showProgress { Terminal.endStatus() }
        for warning in result.warnings { Terminal.warning(warning) }
        guard !quiet else { return }
        let timeline = result.timeline
        let speed = timeline.duration / max(result.wallSeconds, 1e-9)
        print(
            "Wrote \(output): \(formatDuration(timeline.duration)), \(timeline.segments.count) message\(timeline.segments.count == 1 ? "" : "s"), "
                + "\(timeline.speakers.count) speaker\(timeline.speakers.count == 1 ? "" : "s"), \(timeline.sampleRate) Hz "
                + (timeline.channels == 1 ? "mono" : "stereo")
                + String(
                    format: speed < 10 ? " (rendered in %.2f s, %.1f× real time)" : " (rendered in %.2f s, %.0f× real time)", result.wallSeconds,
                    speed))
        if let synthesis = last.value, synthesis.toSynthesize > 0 {
            var parts = [
                "\(synthesis.toSynthesize) synthesized", "\(synthesis.cacheHits) from cache",
                "\(synthesis.requests) provider request\(synthesis.requests == 1 ? "" : "s")",
            ]
            if synthesis.retries > 0 { parts.append("\(synthesis.retries) retr\(synthesis.retries == 1 ? "y" : "ies")") }
            if synthesis.fallbacks > 0 { parts.append("\(synthesis.fallbacks) with the fallback voice") }
            print("Voices: " + parts.joined(separator: ", "))
        }
        for path in [self.timeline, waveform, captions].compactMap({ $0 }) { print("Wrote \(path)") }
    }

    static func describe(_ progress: RenderProgress) -> String {
        var line = ""
        if progress.toSynthesize > 0 {
            line = "Voices: \(progress.synthesized)/\(progress.toSynthesize), \(progress.cacheHits) from cache"
            if progress.retries > 0 { line += ", \(progress.retries) retr\(progress.retries == 1 ? "y" : "ies")" }
            if progress.fallbacks > 0 { line += ", \(progress.fallbacks) fallback" }
            line += " · "
        }
        return line + "Rendered: \(progress.rendered)/\(progress.total) messages"
    }
}

/// Voice provider options shared by `render` and `speak`.
struct VoiceArguments: ParsableArguments {
    @Option(
        name: .customLong("cache-dir"), help: "Voice cache folder (default: $CHORUS_CACHE_DIR, else $XDG_CACHE_HOME/chorus, else ~/.cache/chorus).")
    var cacheDirectory: String?

    @Option(name: .customLong("cache-max-mb"), parsing: .unconditional, help: "Voice cache size limit in MB; least recently used clips go first.")
    var cacheMaxMB = Chorus.Configuration.defaultCacheMaxBytes / 1_048_576

    @Option(parsing: .unconditional, help: "Provider requests in flight at once, per provider.")
    var concurrency = Chorus.Configuration.defaultProviderConcurrency

    @Option(name: .customLong("fallback-voice"), help: "Voice (provider:voice) for messages whose provider fails permanently.")
    var fallbackVoice: String?

    @Option(
        name: [.customLong("default-voices"), .customLong("voice-engine")],
        help:
            "Default voices for speakers without one: natural (the natural Kokoro and Piper voices installed, then Flite's and espeak-ng's; each speaker matched by how they sound), flite (Flite's, then espeak-ng's) or espeak. (--voice-engine, and piper for natural: the names before 0.3.)"
    )
    var defaultVoices: String = DefaultVoices.natural.rawValue

    func validate() throws {
        if cacheMaxMB < 1 { throw ValidationError("--cache-max-mb \(cacheMaxMB): must be at least 1") }
        if !Chorus.Configuration.concurrencyRange.contains(concurrency) {
            throw ValidationError(
                "--concurrency \(concurrency): must be between \(Chorus.Configuration.concurrencyRange.lowerBound) and \(Chorus.Configuration.concurrencyRange.upperBound)"
            )
        }
        if let fallbackVoice, VoiceID(fallbackVoice) == nil {
            throw ValidationError("--fallback-voice \(fallbackVoice): use provider:voice, e.g. espeak:en-us")
        }
        if DefaultVoices(name: defaultVoices) == nil {
            throw ValidationError("--default-voices \(defaultVoices): use \(DefaultVoices.allCases.map(\.rawValue).joined(separator: " or "))")
        }
    }

    /// The library entry point configured from these options and the environment.
    func chorus() throws -> Chorus {
        var configuration = Chorus.Configuration()
        if let cacheDirectory { configuration.cacheDirectory = URL(fileURLWithPath: cacheDirectory) }
        configuration.cacheMaxBytes = min(cacheMaxMB, Int.max / 1_048_576) * 1_048_576
        configuration.providerConcurrency = concurrency
        configuration.defaultVoices = DefaultVoices(name: defaultVoices) ?? .natural
        return try Chorus(configuration: configuration)
    }
}
