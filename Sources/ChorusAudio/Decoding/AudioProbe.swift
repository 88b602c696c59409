public import Foundation

/// Facts about an audio file, with its exact decoded length.
public struct ProbeResult: Sendable, Codable, Equatable {
    /// The file as given.
    public var path: String
    /// Container, codec, source rate/channels, bit rate and declared duration.
    public var stream: AudioStreamInfo
    /// Decoded frames (samples per channel), encoder delay and padding excluded.
    public var samples: Int
    /// `samples / sampleRate`, in seconds.
    public var duration: Double
    /// Size of the file in bytes.
    public var fileSize: Int
}

/// Reports what a file is and exactly how long it is, by decoding it.
///
/// The duration is what FFmpeg's decoders yield (LAME/Xing delay and padding, MP4 edit lists and
/// Opus pre-skip honoured), not a header estimate.
///
/// ```swift
/// let probe = try AudioProbe.probe(URL(fileURLWithPath: "clip.mp3"))
/// print(probe.samples, probe.duration)
/// ```
public enum AudioProbe {
    /// Decodes `url` to count its samples.
    /// - Throws: `AudioError` naming the file when it cannot be read or decoded.
    public static func probe(_ url: URL) throws -> ProbeResult {
        let reader = try AudioFileReader(url: url)
        let frames = try reader.readToEnd { _ in }
        let size = (try? FileManager.default.attributesOfItem(atPath: url.path)[.size] as? Int) ?? 0
        return ProbeResult(
            path: url.path, stream: reader.info, samples: frames,
            duration: reader.outputFormat.seconds(frames: frames), fileSize: size)
    }
}

extension ProbeResult {
    /// `{"path", "container", "codec", "sample_rate", "channels", "bit_rate", "duration", "samples", …}`.
    public func jsonData() -> Data {
        OrderedJSON.object([
            ("path", .string(path)),
            ("container", .string(stream.container)), ("container_name", .string(stream.containerDescription)),
            ("codec", .string(stream.codec)), ("codec_name", .string(stream.codecDescription)),
            ("sample_rate", .integer(stream.sampleRate)), ("channels", .integer(stream.channels)),
            ("bit_rate", .optional(stream.bitRate)),
            ("duration", .number(duration)), ("samples", .integer(samples)),
            ("declared_duration", .optional(stream.declaredDuration)), ("file_size", .integer(fileSize)),
        ]).data()
    }
}
