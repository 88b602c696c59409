public import Foundation

/// How a conversation is rendered. Defaults: 44.1 kHz mono (48 kHz for Opus), 300 ms gaps,
/// −16 LUFS with true peak ≤ −1 dBTP, edge silence trimmed, 5 ms fades, 128 kbit/s for lossy output.
///
/// ```swift
/// var options = RenderOptions()
/// options.targetLoudness = -19
/// options.waveform = WaveformOptions(zoom: .pixelsPerSecond(100), bits: 8)
/// ```
public struct RenderOptions: Sendable {
    /// Output sample rate; `nil` picks the output format's default.
    public var sampleRate: Int?
    /// 1 (mono) or 2 (stereo).
    public var channels: Int = 1
    /// Silence between messages; `nil` uses the conversation's `gap_ms`, else 300.
    public var gapMilliseconds: Int?
    /// Loudness-normalize each message.
    public var normalize = true
    /// Target integrated loudness, LUFS (−70 … −5).
    public var targetLoudness: Double = -16
    /// True-peak ceiling, dBTP.
    public var truePeakCeiling: Double = -1
    /// Trim leading and trailing silence of each message.
    public var trimSilence = true
    /// Trimming parameters.
    public var trimmer = SilenceTrimmer()
    /// Fade length at each message's edges, milliseconds (≤ 10).
    public var fadeMilliseconds = 5
    /// Bits per second for MP3, M4A and Ogg output.
    public var bitRate = 128_000
    /// LAME quality 0–9 (3 is LAME's default).
    public var mp3Quality = 3
    /// Waveform peaks to compute, if any.
    public var waveform: WaveformOptions?
    /// Messages decoded and normalized at once (the encoder runs beside them).
    public var concurrency = max(1, ProcessInfo.processInfo.activeProcessorCount)

    public init() {}

    /// The sample format of the output for `fileFormat`.
    public func outputFormat(for fileFormat: OutputFileFormat) -> AudioFormat {
        AudioFormat(sampleRate: sampleRate ?? fileFormat.defaultSampleRate, channels: channels)
    }

    /// Checks every value, naming the option that is out of range.
    public func validate(for fileFormat: OutputFileFormat) throws {
        if let sampleRate, !(8_000...192_000).contains(sampleRate) {
            throw AudioError(.invalidArgument, subject: "--sample-rate \(sampleRate)", reason: "must be between 8000 and 192000 Hz")
        }
        if let gapMilliseconds, !(0...60_000).contains(gapMilliseconds) {
            throw AudioError(.invalidArgument, subject: "--gap-ms \(gapMilliseconds)", reason: "must be between 0 and 60000 milliseconds")
        }
        if !targetLoudness.isFinite || !(-70.0 ... -5.0).contains(targetLoudness) {
            throw AudioError(.invalidArgument, subject: "--loudness \(targetLoudness)", reason: "must be between -70 and -5 LUFS")
        }
        if !(0...9).contains(mp3Quality) {
            throw AudioError(.invalidArgument, subject: "--quality \(mp3Quality)", reason: "must be between 0 (best) and 9 (fastest)")
        }
        if concurrency < 1 || concurrency > 64 {
            throw AudioError(.invalidArgument, subject: "--jobs \(concurrency)", reason: "must be between 1 and 64")
        }
        try fileFormat.validate(outputFormat(for: fileFormat), bitRate: bitRate)
        try waveform?.validate()
    }
}

/// Where a render writes. Every file is written under a temporary name and renamed into place
/// only when the whole render succeeded.
public struct RenderOutputs: Sendable {
    public var audio: URL
    public var timeline: URL?
    public var waveform: URL?
    public var captions: URL?

    public init(audio: URL, timeline: URL? = nil, waveform: URL? = nil, captions: URL? = nil) {
        self.audio = audio
        self.timeline = timeline
        self.waveform = waveform
        self.captions = captions
    }
}
