import Foundation

/// How a conversation is rendered, and the one owner of every range and default: the CLI shows
/// these defaults in `--help` and the service applies them to requests.
///
/// Defaults: 44.1 kHz mono (48 kHz for Opus), −16 LUFS with true peak ≤ −1 dBTP, edge silence
/// trimmed, 5 ms fades, 128 kbit/s for lossy output, LAME quality 3. The gap between messages
/// belongs to the conversation (`gap_ms`, default `defaultGapMilliseconds`).
///
/// ```swift
/// var options = RenderOptions()
/// options.targetLoudness = -19
/// options.waveform = WaveformOptions(zoom: .pixelsPerSecond(100), bits: 8)
/// try options.validate(for: .mp3)
/// ```
public struct RenderOptions: Sendable, Encodable {
    // MARK: Ranges and defaults

    /// Silence between messages when a conversation does not say, milliseconds.
    public static let defaultGapMilliseconds = 300
    /// Allowed `gap_ms`.
    public static let gapRange = 0...60_000
    /// A message's own gap (`gap_ms` of a message): negative overlaps the message before by that much.
    public static let messageGapRange = -60_000...60_000
    /// Default target loudness, LUFS.
    public static let defaultLoudness = -16.0
    /// Allowed target loudness, LUFS.
    public static let loudnessRange = -70.0 ... -5.0
    /// Default bit rate of lossy output, bits per second.
    public static let defaultBitRate = 128_000
    /// Default LAME quality (LAME's own default).
    public static let defaultMP3Quality = 3
    /// LAME quality: 0 (best, slowest) … 9 (fastest).
    public static let mp3QualityRange = 0...9
    /// Output sample rates any format may use (each format narrows it: `OutputFileFormat.supportedSampleRates`).
    public static let sampleRateRange = 8_000...192_000
    /// Output channels.
    public static let channelRange = 1...2
    /// Messages processed in parallel per render.
    public static let jobsRange = 1...64
    /// Default parallel messages: one per core.
    public static var defaultJobs: Int { min(jobsRange.upperBound, max(1, ProcessInfo.processInfo.activeProcessorCount)) }

    // MARK: Settings

    /// Output sample rate; `nil` picks the output format's default.
    public var sampleRate: Int?
    /// 1 (mono) or 2 (stereo).
    public var channels = 1
    /// Loudness-normalize each message.
    public var normalize = true
    /// Target integrated loudness, LUFS (`loudnessRange`).
    public var targetLoudness = RenderOptions.defaultLoudness
    /// True-peak ceiling, dBTP.
    public var truePeakCeiling = -1.0
    /// Trim leading and trailing silence of each message.
    public var trimSilence = true
    /// Trimming parameters.
    public var trimmer = SilenceTrimmer()
    /// Fade length at each message's edges, milliseconds (≤ 10).
    public var fadeMilliseconds = 5
    /// Bits per second for MP3, M4A and Ogg output.
    public var bitRate = RenderOptions.defaultBitRate
    /// LAME quality (`mp3QualityRange`).
    public var mp3Quality = RenderOptions.defaultMP3Quality
    /// Waveform peaks to compute, if any.
    public var waveform: WaveformOptions?
    /// Write one chapter per message into the file (`ChapterTitle`): ID3v2 `CHAP`/`CTOC` in MP3, the
    /// MP4 chapter list in M4A, `CHAPTERxxx` comments in Ogg (not in a streamed Ogg); WAV, FLAC
    /// and AIFF have none.
    public var chapters = false
    /// Messages decoded and normalized at once (the encoder runs beside them), and MP3 or AAC pieces encoded at once.
    public var jobs = RenderOptions.defaultJobs
    /// One encoder over the whole MP3 or M4A, instead of pieces cut in the silence between messages and
    /// encoded in parallel (`ParallelEncoder`): the reference the parallel encoder is compared with.
    public var serialEncode = false

    public init() {}

    /// The sample format of the output for `fileFormat`.
    public func outputFormat(for fileFormat: OutputFileFormat) -> AudioFormat {
        AudioFormat(sampleRate: sampleRate ?? fileFormat.defaultSampleRate, channels: channels)
    }

    /// Checks every value for output in `fileFormat`.
    /// - Throws: `AudioError.invalidArgument` whose `subject` is the field (`sample_rate`, `loudness`, `quality`,
    ///   `jobs`, `channels`, `bitrate`, `bits`, `samples_per_pixel`, `pixels_per_second`) and `value` what was given.
    public func validate(for fileFormat: OutputFileFormat) throws {
        if !targetLoudness.isFinite || !Self.loudnessRange.contains(targetLoudness) {
            throw AudioError.invalid(
                "loudness", OrderedJSON.format(targetLoudness),
                "must be between \(Int(Self.loudnessRange.lowerBound)) and \(Int(Self.loudnessRange.upperBound)) LUFS")
        }
        if !Self.mp3QualityRange.contains(mp3Quality) {
            throw AudioError.invalid("quality", mp3Quality, "must be between 0 (best) and 9 (fastest)")
        }
        if !Self.jobsRange.contains(jobs) {
            throw AudioError.invalid("jobs", jobs, "must be between \(Self.jobsRange.lowerBound) and \(Self.jobsRange.upperBound)")
        }
        try fileFormat.validate(outputFormat(for: fileFormat), bitRate: bitRate)
        try waveform?.validate(sampleRate: outputFormat(for: fileFormat).sampleRate)
    }

    /// Checks one message's gap (`gap_ms` of a message, named by `field`): negative is an overlap with the message
    /// before.
    /// - Throws: `AudioError.invalidArgument` about `field`.
    public static func validate(messageGapMilliseconds gap: Int, field: String) throws {
        guard messageGapRange.contains(gap) else {
            throw AudioError.invalid(field, gap, "must be between \(messageGapRange.lowerBound) and \(messageGapRange.upperBound) milliseconds")
        }
    }

    /// Checks a conversation's gap.
    /// - Throws: `AudioError.invalidArgument` about `gap_ms`.
    public static func validate(gapMilliseconds: Int) throws {
        guard gapRange.contains(gapMilliseconds) else {
            throw AudioError.invalid(
                "gap_ms", gapMilliseconds,
                "must be between \(gapRange.lowerBound) and \(gapRange.upperBound) milliseconds")
        }
    }
}
