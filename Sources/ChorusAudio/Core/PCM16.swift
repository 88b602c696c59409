public import Foundation

/// The single float ↔ 16-bit conversion used everywhere: WAV/FLAC/AIFF output, waveform peaks,
/// and 16-bit PCM from TTS providers and espeak-ng, so peaks computed before encoding equal the
/// samples a decoder reads back.
///
/// `sample(_:)` is FFmpeg's s16 → float (`x / 32768`) and `quantize(_:)` its exact inverse, so
/// 16-bit sources round-trip unchanged.
///
/// ```swift
/// PCM16.quantize(0.5)                   // 16384
/// PCM16.sample(16_384)                  // 0.5
/// PCM16.samples(littleEndian: body)     // raw provider PCM as Float32
/// ```
public enum PCM16 {
    /// A float sample as 16-bit: round half away from zero, clamp; NaN becomes 0.
    @inline(__always)
    public static func quantize(_ value: Float) -> Int16 {
        let scaled = value * 32_768
        if scaled >= 32_766.5 { return 32_767 }
        if scaled <= -32_767.5 { return -32_768 }
        guard scaled == scaled else { return 0 }
        return Int16(scaled + (scaled < 0 ? -0.5 : 0.5))
    }

    /// A 16-bit sample as float (`x / 32768`).
    @inline(__always)
    public static func sample(_ value: Int16) -> Float {
        Float(value) / 32_768
    }

    /// Quantizes `source` into `destination` (resized to match).
    public static func quantize(_ source: UnsafeBufferPointer<Float>, into destination: inout [Int16]) {
        if destination.count != source.count {
            destination = [Int16](repeating: 0, count: source.count)
        }
        destination.withUnsafeMutableBufferPointer { output in
            for index in 0..<source.count { output[index] = quantize(source[index]) }
        }
    }

    /// 16-bit samples as floats.
    public static func samples(_ values: [Int16]) -> [Float] {
        values.map(sample)
    }

    /// Little-endian signed 16-bit PCM bytes (a provider's raw `pcm` response) as floats; a trailing odd byte is ignored.
    public static func samples(littleEndian data: Data) -> [Float] {
        let count = data.count / 2
        return data.withUnsafeBytes { raw in
            (0..<count).map { index in sample(Int16(littleEndian: raw.loadUnaligned(fromByteOffset: index * 2, as: Int16.self))) }
        }
    }
}
