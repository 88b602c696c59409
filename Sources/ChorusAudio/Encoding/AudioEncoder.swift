public import Foundation

/// Receives stitched PCM in order and encodes it once into an `EncodedOutput`.
///
/// Samples arrive as interleaved Float32 together with their 16-bit quantization (`PCM16`), so
/// 16-bit formats and waveform peaks see the very same values.
package protocol AudioEncoder: AnyObject {
    var format: AudioFormat { get }
    func write(_ samples: UnsafeBufferPointer<Float>, pcm16: UnsafeBufferPointer<Int16>) throws
    /// Flushes the encoder and completes its output, with `chapters` where the format carries
    /// them (their titles were `EncoderSettings.chapterTitles`). Must be called once, after the last `write`.
    func finish(chapters: [ChapterMark]) throws
    /// CPU seconds the encoder spent on threads of its own (the caller times its calls; this is the rest).
    var otherThreadsSeconds: Double { get }
}

extension AudioEncoder {
    /// Finishes without chapters.
    package func finish() throws { try finish(chapters: []) }

    package var otherThreadsSeconds: Double { 0 }
}

/// Settings for writing one audio file.
public struct EncoderSettings: Sendable {
    public var fileFormat: OutputFileFormat
    public var format: AudioFormat
    /// Bits per second for lossy formats.
    public var bitRate: Int
    /// LAME's algorithm quality, 0 (best, slowest) … 9 (fastest).
    public var mp3Quality: Int
    /// Titles of the chapters `finish` will mark, for formats that size a header by them (MP3's
    /// ID3 tag, Ogg's comment header); empty for none. Formats without chapters ignore them.
    public var chapterTitles: [String]
    /// How many of `chapterTitles` may be replaced by longer ones at `finish` (a recorded message's, titled by its
    /// speaker until it is heard): MP3's ID3 tag keeps room for them. MP4 takes its titles at the end anyway; Ogg's
    /// comment header keeps the first titles.
    public var growingChapterTitles = 0
    /// MP3 or AAC pieces encoded at once (`ParallelEncoder`); 1 for one encoder over the whole stream.
    public var encoderJobs: Int
    /// The stream has no digital silence to cut pieces in (a music bed runs under it): MP3 pieces overlap instead
    /// (`PieceCutting.overlapped`); M4A keeps one encoder.
    public var withoutSilence = false

    public init(
        fileFormat: OutputFileFormat, format: AudioFormat, bitRate: Int = RenderOptions.defaultBitRate,
        mp3Quality: Int = RenderOptions.defaultMP3Quality, chapterTitles: [String] = [], encoderJobs: Int = 1
    ) {
        self.fileFormat = fileFormat
        self.format = format
        self.bitRate = bitRate
        self.mp3Quality = mp3Quality
        self.chapterTitles = chapterTitles
        self.encoderJobs = encoderJobs
    }
}

extension EncoderSettings {
    var cutting: PieceCutting { withoutSilence ? .overlapped : .inSilence }
    /// Pieces cut in silence cost nothing extra; overlapped ones cost their overlap (MP3 24 frames, AAC 36 packets:
    /// 0.6–0.8 s at 44.1 kHz), so they are longer: 15 s keeps that under 6% of the encoding.
    var minimumPieceSeconds: Double { withoutSilence ? 15 : 6 }
}

enum EncoderFactory {
    /// An encoder writing `settings.fileFormat` into `output`.
    static func make(_ settings: EncoderSettings, output: EncodedOutput) throws -> any AudioEncoder {
        try settings.fileFormat.validate(settings.format, bitRate: settings.bitRate)
        switch settings.fileFormat {
        case .mp3 where settings.encoderJobs > 1 && !output.isStreaming:
            // A stream keeps one encoder: its frames leave as soon as they are encoded, where pieces would
            // wait for the silence after them (a listener would wait for the next message's synthesis).
            return try ParallelEncoder(
                joiner: MP3Joiner(
                    output: output, format: settings.format, bitRate: settings.bitRate,
                    quality: settings.mp3Quality, chapterTitles: settings.chapterTitles,
                    growingTitles: settings.growingChapterTitles),
                format: settings.format, jobs: settings.encoderJobs, cutting: settings.cutting,
                minimumPieceSeconds: settings.minimumPieceSeconds)
        case .mp3:
            return try MP3Encoder(
                output: output, format: settings.format, bitRate: settings.bitRate, quality: settings.mp3Quality,
                chapterTitles: settings.chapterTitles, growingTitles: settings.growingChapterTitles)
        case .m4a where settings.encoderJobs > 1 && !settings.withoutSilence:
            // Without silence (a bed), one encoder: FFmpeg's AAC rate control adapts over tens of seconds and a fresh
            // encoder cannot be given another's state; overlapped pieces measured 1.07–1.27× one encoder's noise over
            // the whole file even when warmed by 128 packets (`AACJoiner.overlap`).
            return try ParallelEncoder(
                joiner: AACJoiner(
                    output: output, format: settings.format, bitRate: settings.bitRate,
                    chapterTitles: settings.chapterTitles),
                format: settings.format, jobs: settings.encoderJobs, cutting: settings.cutting,
                minimumPieceSeconds: settings.minimumPieceSeconds)
        case .wav:
            return try SndFileEncoder(output: output, format: settings.format, container: .wav)
        case .flac:
            return try SndFileEncoder(output: output, format: settings.format, container: .flac)
        case .aiff:
            return try SndFileEncoder(output: output, format: settings.format, container: .aiff)
        case .m4a:
            return try CodecEncoder(
                output: output, format: settings.format, codec: .aacInM4A, bitRate: settings.bitRate,
                chapterTitles: settings.chapterTitles)
        case .ogg:
            return try CodecEncoder(
                output: output, format: settings.format, codec: .opusInOgg, bitRate: settings.bitRate,
                chapterTitles: settings.chapterTitles)
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
    public static func write(_ buffer: AudioBuffer, to url: URL, bitRate: Int = RenderOptions.defaultBitRate) throws {
        let settings = EncoderSettings(fileFormat: try OutputFileFormat(url: url), format: buffer.format, bitRate: bitRate)
        let destination = try AtomicOutput(destination: url)
        defer { destination.discard() }
        let output = try EncodedOutput(file: destination.temporaryURL, subject: url.path)
        try encode(buffer, with: EncoderFactory.make(settings, output: output))
        try output.finish()
        try destination.commit()
    }

    /// Encodes `buffer` into memory in `fileFormat`.
    public static func data(_ buffer: AudioBuffer, as fileFormat: OutputFileFormat, bitRate: Int = RenderOptions.defaultBitRate) throws -> Data {
        let output = try EncodedOutput(file: nil, memory: true, subject: "\(fileFormat.rawValue) in memory")
        try encode(
            buffer, with: EncoderFactory.make(EncoderSettings(fileFormat: fileFormat, format: buffer.format, bitRate: bitRate), output: output))
        return try output.finish() ?? Data()
    }

    /// Feeds `buffer` to `encoder` and, unless `finishing` is false, finishes it (the caller finishes the encoder's output).
    package static func encode(_ buffer: AudioBuffer, with encoder: any AudioEncoder, finishing: Bool = true) throws {
        var pcm16: [Int16] = []
        try buffer.samples.withUnsafeBufferPointer { samples in
            PCM16.quantize(samples, into: &pcm16)
            try pcm16.withUnsafeBufferPointer { try encoder.write(samples, pcm16: $0) }
        }
        if finishing { try encoder.finish() }
    }
}
