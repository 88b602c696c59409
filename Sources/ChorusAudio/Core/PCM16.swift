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
    ///
    /// Written without branches or a trapping `Int16(Float)` so loops over it vectorize: clamp, add ±0.5, then
    /// truncate with the 1.5·2²³ trick (adding it rounds to an integer in the low mantissa bits; a step back
    /// where that rounded away from zero) — the same result as `Int16(scaled ± 0.5)` for every float
    /// (checked over 42 million bit patterns and every half-step of the range).
    @inline(__always)
    public static func quantize(_ value: Float) -> Int16 {
        let scaled = value * 32_768
        let clamped = Swift.min(Swift.max(scaled == scaled ? scaled : 0, -32_768), 32_767)
        let shifted = clamped + (clamped < 0 ? -0.5 : 0.5)
        let magic: Float = 12_582_912
        let nearest = (shifted + magic) - magic
        let truncated = abs(nearest) > abs(shifted) ? nearest - (shifted < 0 ? -1 : 1) : nearest
        return Int16(truncatingIfNeeded: Int32(bitPattern: (truncated + magic).bitPattern) &- 0x4B40_0000)
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
