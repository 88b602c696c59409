import ArgumentParser
import ChorusAudio
import ChorusVoices
import Foundation

/// Output and processing options shared by `render` and `speak`.
struct RenderArguments: ParsableArguments {
    @Option(name: [.short, .customLong("output")], help: "Output audio file (.mp3, .wav, .flac, .aiff, .m4a, .ogg).")
    var output: String

    @Option(help: "Also write the timeline JSON here.")
    var timeline: String?

    @Option(help: "Also write waveform peaks here (.json or .dat, audiowaveform formats).")
    var waveform: String?

    @Option(help: "Also write WebVTT captions here.")
    var captions: String?

    @Option(name: .customLong("gap-ms"), parsing: .unconditional,
            help: "Silence between messages in milliseconds (default: the file's gap_ms, else 300).")
    var gapMs: Int?

    @Option(parsing: .unconditional, help: "Target loudness in LUFS.")
    var loudness: Double = -16

    @Flag(name: .customLong("no-normalize"), help: "Keep each message's own loudness.")
    var noNormalize = false

    @Flag(name: .customLong("no-trim"), help: "Keep each message's leading and trailing silence.")
    var noTrim = false

    @Option(name: .customLong("sample-rate"), parsing: .unconditional, help: "Output sample rate in Hz (default 44100; 48000 for .ogg).")
    var sampleRate: Int?

    @Option(parsing: .unconditional, help: "Output channels: 1 or 2.")
    var channels: Int = 1

    @Option(help: "Bit rate for .mp3, .m4a and .ogg output.")
    var bitrate: BitRate = BitRate(argument: "128k")!

    @Option(parsing: .unconditional, help: "MP3 encoder quality, 0 (best) to 9 (fastest); 3 is LAME's default.")
    var quality: Int = 3

    @Option(parsing: .unconditional, help: "Messages decoded and normalized in parallel (default: the number of cores).")
    var jobs: Int?

    @OptionGroup(title: "Waveform")
    var waveformArguments: WaveformArguments

    @Flag(name: .shortAndLong, help: "Print nothing but errors.")
    var quiet = false

    func validate() throws {
        if let gapMs, !(0...60_000).contains(gapMs) { throw ValidationError("--gap-ms \(gapMs): must be between 0 and 60000") }
        if let sampleRate, !(8_000...192_000).contains(sampleRate) {
            throw ValidationError("--sample-rate \(sampleRate): must be between 8000 and 192000 Hz")
        }
        if !(1...2).contains(channels) { throw ValidationError("--channels \(channels): must be 1 or 2") }
        if !loudness.isFinite || !(-70.0 ... -5.0).contains(loudness) {
            throw ValidationError("--loudness \(loudness): must be between -70 and -5 LUFS")
        }
        if !(0...9).contains(quality) { throw ValidationError("--quality \(quality): must be between 0 and 9") }
        if let jobs, !(1...64).contains(jobs) { throw ValidationError("--jobs \(jobs): must be between 1 and 64") }
        if OutputFileFormat(fileExtension: URL(fileURLWithPath: output).pathExtension) == nil {
            throw ValidationError("--output \(output): use a .mp3, .wav, .flac, .aiff, .m4a or .ogg file name")
        }
        if let waveform, !["json", "dat"].contains(URL(fileURLWithPath: waveform).pathExtension.lowercased()) {
            throw ValidationError("--waveform \(waveform): use a .json or .dat file name")
        }
    }

    var options: RenderOptions {
        var options = RenderOptions()
        options.sampleRate = sampleRate
        options.channels = channels
        options.gapMilliseconds = gapMs
        options.normalize = !noNormalize
        options.targetLoudness = loudness
        options.trimSilence = !noTrim
        options.bitRate = bitrate.bitsPerSecond
        options.mp3Quality = quality
        if let jobs { options.concurrency = jobs }
        if waveform != nil { options.waveform = waveformArguments.options }
        return options
    }

    var outputs: RenderOutputs {
        RenderOutputs(audio: URL(fileURLWithPath: output), timeline: timeline.map { URL(fileURLWithPath: $0) },
                      waveform: waveform.map { URL(fileURLWithPath: $0) }, captions: captions.map { URL(fileURLWithPath: $0) })
    }

    /// Renders and reports: progress on a terminal, warnings, then a summary unless quiet.
    func render(_ messages: [RenderMessage], gapMilliseconds: Int?, synthesis: SynthesisProgress? = nil) async throws {
        let showProgress = !quiet && Terminal.isInteractive
        let report: (@Sendable (RenderProgress) -> Void)? = showProgress ? Self.showProgress : nil
        let result = try await ConversationRenderer(options: options).render(
            messages, gapMilliseconds: gapMilliseconds, to: outputs, progress: report)
        if showProgress { Terminal.endStatus() }
        for warning in result.warnings { Terminal.warning(warning) }
        guard !quiet else { return }
        let timeline = result.timeline
        let speed = timeline.duration / max(result.wallSeconds, 1e-9)
        print("Wrote \(output): \(formatDuration(timeline.duration)), \(timeline.segments.count) message\(timeline.segments.count == 1 ? "" : "s"), "
              + "\(timeline.speakers.count) speaker\(timeline.speakers.count == 1 ? "" : "s"), \(timeline.sampleRate) Hz "
              + (timeline.channels == 1 ? "mono" : "stereo")
              + String(format: " (rendered in %.2f s, %.0f× real time)", result.wallSeconds, speed))
        if let synthesis, synthesis.total > 0 {
            var parts = ["\(synthesis.total) synthesized", "\(synthesis.cacheHits) from cache", "\(synthesis.requests) provider request\(synthesis.requests == 1 ? "" : "s")"]
            if synthesis.retries > 0 { parts.append("\(synthesis.retries) retr\(synthesis.retries == 1 ? "y" : "ies")") }
            if synthesis.fallbacks > 0 { parts.append("\(synthesis.fallbacks) with the fallback voice") }
            print("Voices: " + parts.joined(separator: ", "))
        }
        for path in [self.timeline, waveform, captions].compactMap({ $0 }) { print("Wrote \(path)") }
    }

    @Sendable static func showProgress(_ progress: RenderProgress) {
        Terminal.status("Rendering: \(progress.completed)/\(progress.total) messages")
    }
}

/// Voice provider options shared by `render`, `speak` and `voices`.
struct VoiceArguments: ParsableArguments {
    @Option(name: .customLong("cache-dir"), help: "Voice cache folder (default: $CHORUS_CACHE_DIR, else $XDG_CACHE_HOME/chorus, else ~/.cache/chorus).")
    var cacheDirectory: String?

    @Option(name: .customLong("cache-max-mb"), parsing: .unconditional, help: "Voice cache size limit in MB; least recently used clips go first.")
    var cacheMaxMB = 1024

    @Option(parsing: .unconditional, help: "Provider requests in flight at once, per provider.")
    var concurrency = 4

    @Option(name: .customLong("fallback-voice"), help: "Voice (provider:voice) for messages whose provider fails permanently.")
    var fallbackVoice: String?

    func validate() throws {
        if !(1...10_000_000).contains(cacheMaxMB) { throw ValidationError("--cache-max-mb \(cacheMaxMB): must be at least 1") }
        if !(1...64).contains(concurrency) { throw ValidationError("--concurrency \(concurrency): must be between 1 and 64") }
        if let fallbackVoice, VoiceID(fallbackVoice) == nil {
            throw ValidationError("--fallback-voice \(fallbackVoice): use provider:voice, e.g. espeak:en-us")
        }
    }

    func synthesizer() throws -> ConversationSynthesizer {
        let directory = cacheDirectory.map { URL(fileURLWithPath: $0) } ?? SynthesisCache.defaultDirectory()
        let cache = try SynthesisCache(directory: directory, maxBytes: cacheMaxMB * 1_048_576)
        let options = SynthesisOptions(cache: cache, concurrency: concurrency, fallbackVoice: fallbackVoice.flatMap(VoiceID.init))
        return ConversationSynthesizer(registry: .standard(), options: options)
    }
}
