/// The single float ↔ 16-bit conversion used everywhere (WAV/FLAC/AIFF output and waveform peaks),
/// so that peaks computed before encoding equal the samples a decoder reads back.
///
/// It is the exact inverse of FFmpeg's s16 → float (`x / 32768`), so 16-bit sources round-trip unchanged.
enum PCM16 {
    @inline(__always)
    static func quantize(_ value: Float) -> Int16 {
        // Round half away from zero, then clamp; NaN becomes 0.
        let scaled = value * 32_768
        if scaled >= 32_766.5 { return 32_767 }
        if scaled <= -32_767.5 { return -32_768 }
        guard scaled == scaled else { return 0 }
        return Int16(scaled + (scaled < 0 ? -0.5 : 0.5))
    }

    static func quantize(_ source: UnsafeBufferPointer<Float>, into destination: inout [Int16]) {
        if destination.count != source.count {
            destination = [Int16](repeating: 0, count: source.count)
        }
        destination.withUnsafeMutableBufferPointer { output in
            for index in 0..<source.count { output[index] = quantize(source[index]) }
        }
    }
}
