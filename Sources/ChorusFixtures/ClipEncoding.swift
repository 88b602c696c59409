import CSndFile
public import ChorusAudio
public import Foundation

/// Ways to encode a clip, covering what phones and TTS providers produce. Used to build test
/// fixtures and the benchmark's mixed-format conversation.
///
/// ```swift
/// try ClipEncoding.m4a.write(voice, to: dir.appendingPathComponent("marcus.m4a"))
/// ```
public enum ClipEncoding: String, CaseIterable, Sendable {
    /// MP3 CBR with the LAME/Xing tag.
    case mp3
    /// MP3 VBR with the LAME/Xing tag.
    case mp3VBR
    /// MP3 CBR without any Xing/LAME tag (no gapless information).
    case mp3Untagged
    /// AAC-LC in M4A.
    case m4a
    /// AAC-LC in ADTS (raw `.aac`, no gapless information).
    case adts
    /// WAV PCM 8-bit unsigned.
    case wav8
    /// WAV PCM 16-bit.
    case wav16
    /// WAV PCM 24-bit.
    case wav24
    /// WAV PCM 32-bit.
    case wav32
    /// WAV 32-bit float.
    case wavFloat
    /// AIFF PCM 16-bit.
    case aiff
    /// FLAC 16-bit.
    case flac
    /// Opus in Ogg (8, 12, 16, 24 or 48 kHz only).
    case opus
    /// Vorbis in Ogg.
    case vorbis

    public var fileExtension: String {
        switch self {
        case .mp3, .mp3VBR, .mp3Untagged: return "mp3"
        case .m4a: return "m4a"
        case .adts: return "aac"
        case .wav8, .wav16, .wav24, .wav32, .wavFloat: return "wav"
        case .aiff: return "aiff"
        case .flac: return "flac"
        case .opus, .vorbis: return "ogg"
        }
    }

    /// The rate a decoder yields: Opus always decodes at 48 kHz.
    public func decodedSampleRate(encodedAt rate: Int) -> Int { self == .opus ? 48_000 : rate }

    /// True when decoders get the exact sample count back (gapless metadata or lossless).
    public var isSampleExact: Bool { self != .mp3Untagged && self != .adts }

    /// True for lossless encodings.
    public var isLossless: Bool {
        switch self {
        case .wav8, .wav16, .wav24, .wav32, .wavFloat, .aiff, .flac: return true
        default: return false
        }
    }

    /// Encodes `buffer` into `url` (written directly, for fixtures).
    public func write(_ buffer: AudioBuffer, to url: URL, bitRate: Int = 64_000) throws {
        let output = try EncodedOutput(file: url)
        try AudioFileWriter.encode(buffer, with: encoder(for: buffer.format, bitRate: bitRate, output: output))
        try output.finish()
    }

    /// Encodes `buffer` into memory.
    public func data(_ buffer: AudioBuffer, bitRate: Int = 64_000) throws -> Data {
        let output = try EncodedOutput(file: nil, memory: true, subject: "\(rawValue) fixture")
        try AudioFileWriter.encode(buffer, with: encoder(for: buffer.format, bitRate: bitRate, output: output))
        return try output.finish() ?? Data()
    }

    private func encoder(for format: AudioFormat, bitRate: Int, output: EncodedOutput) throws -> any AudioEncoder {
        switch self {
        case .mp3: return try MP3Encoder(output: output, format: format, bitRate: bitRate)
        case .mp3VBR: return try MP3Encoder(output: output, format: format, bitRate: bitRate, vbr: true)
        case .mp3Untagged: return try MP3Encoder(output: output, format: format, bitRate: bitRate, writeTag: false)
        case .m4a: return try CodecEncoder(output: output, format: format, codec: .aacInM4A, bitRate: bitRate)
        case .adts: return try CodecEncoder(output: output, format: format, codec: .aacInADTS, bitRate: bitRate)
        case .opus: return try CodecEncoder(output: output, format: format, codec: .opusInOgg, bitRate: bitRate)
        case .vorbis:
            let vorbisRate = format.sampleRate < 16_000 ? 24_000 : max(bitRate, 64_000)
            return try CodecEncoder(output: output, format: format, codec: .vorbisInOgg, bitRate: vorbisRate)
        case .wav8: return try SndFileEncoder(output: output, format: format, container: .wav, encoding: Int32(SF_FORMAT_PCM_U8))
        case .wav16: return try SndFileEncoder(output: output, format: format, container: .wav)
        case .wav24: return try SndFileEncoder(output: output, format: format, container: .wav, encoding: Int32(SF_FORMAT_PCM_24))
        case .wav32: return try SndFileEncoder(output: output, format: format, container: .wav, encoding: Int32(SF_FORMAT_PCM_32))
        case .wavFloat: return try SndFileEncoder(output: output, format: format, container: .wav, encoding: Int32(SF_FORMAT_FLOAT))
        case .aiff: return try SndFileEncoder(output: output, format: format, container: .aiff)
        case .flac: return try SndFileEncoder(output: output, format: format, container: .flac)
        }
    }
}

/// Codecs only fixtures use: phones and providers send them, renders never write them.
extension CodecEncoder.Codec {
    static let aacInADTS = CodecEncoder.Codec(muxer: "adts", encoders: ["aac"], label: "AAC")
    static let vorbisInOgg = CodecEncoder.Codec(muxer: "ogg", encoders: ["libvorbis", "vorbis"], label: "Vorbis")
}
