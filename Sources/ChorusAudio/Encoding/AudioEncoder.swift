public import Foundation

/// Receives stitched PCM in order and writes it to a file, encoding once.
///
/// Samples arrive as interleaved Float32 together with their 16-bit quantization (`PCM16`), so
/// 16-bit formats and waveform peaks see the very same values.
protocol AudioEncoder: AnyObject {
    var format: AudioFormat { get }
    func write(_ samples: UnsafeBufferPointer<Float>, pcm16: UnsafeBufferPointer<Int16>) throws
    /// Flushes the encoder and closes the file. Must be called once, after the last `write`.
    func finish() throws
}

/// Settings for writing one audio file.
public struct EncoderSettings: Sendable {
    public var fileFormat: OutputFileFormat
    public var format: AudioFormat
    /// Bits per second for lossy formats.
    public var bitRate: Int
    /// LAME's algorithm quality, 0 (best, slowest) … 9 (fastest); 3 is LAME's own default.
    public var mp3Quality: Int

    public init(fileFormat: OutputFileFormat, format: AudioFormat, bitRate: Int = 128_000, mp3Quality: Int = 3) {
        self.fileFormat = fileFormat
        self.format = format
        self.bitRate = bitRate
        self.mp3Quality = mp3Quality
    }
}

enum EncoderFactory {
    /// An encoder writing `settings.fileFormat` to `url` (which the caller treats as a temporary file).
    static func make(_ settings: EncoderSettings, url: URL) throws -> any AudioEncoder {
        try settings.fileFormat.validate(settings.format, bitRate: settings.bitRate)
        switch settings.fileFormat {
        case .mp3:
            return try MP3Encoder(url: url, format: settings.format, bitRate: settings.bitRate, quality: settings.mp3Quality)
        case .wav:
            return try SndFileEncoder(url: url, format: settings.format, container: .wav)
        case .flac:
            return try SndFileEncoder(url: url, format: settings.format, container: .flac)
        case .aiff:
            return try SndFileEncoder(url: url, format: settings.format, container: .aiff)
        case .m4a:
            return try CodecEncoder(url: url, format: settings.format, codec: .aacInM4A, bitRate: settings.bitRate)
        case .ogg:
            return try CodecEncoder(url: url, format: settings.format, codec: .opusInOgg, bitRate: settings.bitRate)
        }
    }
}

/// Writes a whole buffer to a file in one call, atomically (temporary file, then rename).
///
/// ```swift
/// try AudioFileWriter.write(clip, to: URL(fileURLWithPath: "tone.flac"))
/// ```
public enum AudioFileWriter {
    /// Encodes `buffer` into `url`; the format comes from `url`'s extension.
    /// - Parameters:
    ///   - buffer: the audio.
    ///   - url: destination; an existing file is replaced only when encoding succeeded.
    ///   - bitRate: for lossy formats.
    public static func write(_ buffer: AudioBuffer, to url: URL, bitRate: Int = 128_000) throws {
        let settings = EncoderSettings(fileFormat: try OutputFileFormat(url: url), format: buffer.format, bitRate: bitRate)
        let output = try AtomicOutput(destination: url)
        defer { output.discard() }
        try encode(buffer, settings: settings, to: output.temporaryURL)
        try output.commit()
    }

    static func encode(_ buffer: AudioBuffer, settings: EncoderSettings, to url: URL) throws {
        let encoder = try EncoderFactory.make(settings, url: url)
        try encode(buffer, with: encoder)
    }

    static func encode(_ buffer: AudioBuffer, with encoder: any AudioEncoder) throws {
        var pcm16: [Int16] = []
        try buffer.samples.withUnsafeBufferPointer { samples in
            PCM16.quantize(samples, into: &pcm16)
            try pcm16.withUnsafeBufferPointer { try encoder.write(samples, pcm16: $0) }
        }
        try encoder.finish()
    }
}
