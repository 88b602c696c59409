public import Foundation

extension WaveformPeaks {
    /// Peaks at `factor` times the samples per pixel, derived exactly: each new point is the min of
    /// `factor` minima and the max of `factor` maxima (blocks start at frame 0 in both, and the final
    /// partial block covers the same frames), so the result equals computing the coarser zoom directly.
    /// - Precondition: `factor` ≥ 1.
    public func coarsened(by factor: Int) -> WaveformPeaks {
        precondition(factor >= 1, "factor must be at least 1")
        guard factor > 1 else { return self }
        var result: [Int16] = []
        result.reserveCapacity((length / factor + 1) * 2 * channels)
        var point = 0
        while point < length {
            let end = min(length, point + factor)
            for channel in 0..<channels {
                var low = Int16.max
                var high = Int16.min
                for source in point..<end {
                    let base = (source * channels + channel) * 2
                    low = Swift.min(low, data[base])
                    high = Swift.max(high, data[base + 1])
                }
                result += [low, high]
            }
            point = end
        }
        return WaveformPeaks(sampleRate: sampleRate, samplesPerPixel: samplesPerPixel * factor, channels: channels, data: result)
    }

    /// Reads audiowaveform's binary `.dat` (version 1 or 2, 8 or 16 bits; 8-bit values are widened ×256).
    /// - Throws: `AudioError.corrupt` naming `name` for a short, inconsistent or unknown header.
    public init(datData bytes: Data, name: String = "waveform.dat") throws {
        func corrupt(_ reason: String) -> AudioError { AudioError(.corrupt, subject: name, reason: reason) }
        func int32(_ offset: Int) throws -> Int {
            guard offset + 4 <= bytes.count else { throw corrupt("the header is cut short") }
            let start = bytes.startIndex + offset
            return Int(Int32(littleEndian: bytes[start..<start + 4].withUnsafeBytes { $0.loadUnaligned(as: Int32.self) }))
        }
        let version = try int32(0)
        guard version == 1 || version == 2 else { throw corrupt("unknown version \(version)") }
        let eightBit = try int32(4) & 1 == 1
        let sampleRate = try int32(8)
        let samplesPerPixel = try int32(12)
        let length = try int32(16)
        let channels = version == 2 ? try int32(20) : 1
        let header = version == 2 ? 24 : 20
        guard sampleRate > 0, samplesPerPixel >= 1, length >= 0, (1...24).contains(channels) else { throw corrupt("impossible header values") }
        let count = length * 2 * channels
        let width = eightBit ? 1 : 2
        guard count <= (bytes.count - header) / width, bytes.count - header == count * width else {
            throw corrupt("\(length) points declared, \(bytes.count - header) bytes of data")
        }
        var values = [Int16](repeating: 0, count: count)
        bytes.withUnsafeBytes { raw in
            for index in 0..<count {
                if eightBit {
                    values[index] = Int16(Int8(bitPattern: raw[header + index])) * 256
                } else {
                    values[index] = Int16(littleEndian: raw.loadUnaligned(fromByteOffset: header + index * 2, as: Int16.self))
                }
            }
        }
        self.init(sampleRate: sampleRate, samplesPerPixel: samplesPerPixel, channels: channels, data: values)
    }
}
