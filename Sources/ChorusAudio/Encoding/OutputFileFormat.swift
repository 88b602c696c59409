public import Foundation

/// The audio formats a render can write, chosen by the output file's extension.
///
/// ```swift
/// let format = try OutputFileFormat(url: URL(fileURLWithPath: "out.m4a"))   // .m4a
/// format.defaultSampleRate   // 44_100
/// ```
public enum OutputFileFormat: String, CaseIterable, Sendable, Codable {
    /// MP3 (LAME), CBR, with a LAME/Xing tag so decoders drop encoder delay and padding.
    case mp3
    /// 16-bit PCM WAV (libsndfile).
    case wav
    /// 16-bit FLAC (libsndfile).
    case flac
    /// 16-bit PCM AIFF (libsndfile).
    case aiff
    /// AAC-LC in an M4A (MP4) container (libavcodec), with an edit list for encoder delay.
    case m4a
    /// Opus in Ogg (libavcodec + libopus), with pre-skip and end trimming.
    case ogg

    /// Recognises `mp3`, `wav`, `flac`, `aiff`/`aif`, `m4a`/`mp4`, `ogg`/`opus` (case-insensitive).
    public init?(fileExtension: String) {
        switch fileExtension.lowercased() {
        case "mp3": self = .mp3
        case "wav", "wave": self = .wav
        case "flac": self = .flac
        case "aiff", "aif": self = .aiff
        case "m4a", "mp4": self = .m4a
        case "ogg", "opus": self = .ogg
        default: return nil
        }
    }

    /// The format for `url`'s extension.
    /// - Throws: `AudioError.invalidArgument` naming the file when the extension is not one of the above.
    public init(url: URL) throws {
        guard let format = OutputFileFormat(fileExtension: url.pathExtension) else {
            let shown = url.pathExtension.isEmpty ? "no extension" : "extension .\(url.pathExtension)"
            throw AudioError(
                .invalidArgument, subject: url.path,
                reason: "cannot tell the output format from \(shown); use .mp3, .wav, .flac, .aiff, .m4a or .ogg")
        }
        self = format
    }

    /// Sample rate used when none is asked for: 44.1 kHz, but 48 kHz for Opus (which has no 44.1 kHz mode).
    public var defaultSampleRate: Int { self == .ogg ? 48_000 : 44_100 }

    /// How messages name the format: `MP3`, `Opus (.ogg)`, …
    public var displayName: String {
        switch self {
        case .ogg: return "Opus (.ogg)"
        case .m4a: return "AAC (.m4a)"
        default: return rawValue.uppercased()
        }
    }

    /// True for lossy formats that take a bit rate.
    public var isLossy: Bool { self == .mp3 || self == .m4a || self == .ogg }

    /// Sample rates the encoder accepts, or `nil` when any rate in 8–192 kHz is fine.
    public var supportedSampleRates: [Int]? {
        switch self {
        case .mp3: return [8_000, 11_025, 12_000, 16_000, 22_050, 24_000, 32_000, 44_100, 48_000]
        case .ogg: return [8_000, 12_000, 16_000, 24_000, 48_000]
        case .m4a: return [8_000, 11_025, 12_000, 16_000, 22_050, 24_000, 32_000, 44_100, 48_000, 64_000, 88_200, 96_000]
        case .wav, .flac, .aiff: return nil
        }
    }

    /// Bit rates (bits/s) the encoder accepts.
    public var bitRateRange: ClosedRange<Int> {
        switch self {
        case .mp3: return 8_000...320_000
        case .m4a: return 16_000...320_000
        case .ogg: return 6_000...510_000
        case .wav, .flac, .aiff: return 0...Int.max
        }
    }

    /// True for formats written front to back that can be streamed while they are encoded (MP3, Ogg/Opus);
    /// the others patch their header at the end.
    public var isStreamable: Bool { self == .mp3 || self == .ogg }

    /// MIME type of the encoded audio.
    public var mimeType: String {
        switch self {
        case .mp3: return "audio/mpeg"
        case .wav: return "audio/wav"
        case .flac: return "audio/flac"
        case .aiff: return "audio/aiff"
        case .m4a: return "audio/mp4"
        case .ogg: return "audio/ogg"
        }
    }

    /// Checks that this format can encode `format` at `bitRate`.
    /// - Throws: `AudioError.invalidArgument` naming the field (`sample_rate`, `channels`, `bitrate`) and what is allowed.
    public func validate(_ format: AudioFormat, bitRate: Int) throws {
        if !RenderOptions.sampleRateRange.contains(format.sampleRate) {
            throw AudioError.invalid(
                "sample_rate", format.sampleRate,
                "must be between \(RenderOptions.sampleRateRange.lowerBound) and \(RenderOptions.sampleRateRange.upperBound) Hz")
        }
        if let rates = supportedSampleRates, !rates.contains(format.sampleRate) {
            throw AudioError.invalid(
                "sample_rate", format.sampleRate,
                "\(displayName) output supports \(rates.map(String.init).joined(separator: ", ")) Hz")
        }
        if !RenderOptions.channelRange.contains(format.channels) {
            throw AudioError.invalid("channels", format.channels, "must be 1 (mono) or 2 (stereo)")
        }
        if isLossy && !bitRateRange.contains(bitRate) {
            throw AudioError.invalid(
                "bitrate", bitRate,
                "\(displayName) needs \(bitRateRange.lowerBound / 1000)k to \(bitRateRange.upperBound / 1000)k")
        }
    }
}
