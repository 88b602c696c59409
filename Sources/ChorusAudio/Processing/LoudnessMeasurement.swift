/// Loudness of one clip and how it was measured.
public struct LoudnessMeasurement: Sendable, Codable, Equatable {
    /// How `loudness` was obtained.
    public enum Method: String, Sendable, Codable {
        /// EBU R128 gated integrated loudness.
        case integrated
        /// Clip shorter than one 400 ms gating block: measured on the clip repeated to 1.2 s, which
        /// gives its K-weighted mean-square level.
        case shortClip
        /// Nothing above the absolute gate (−70 LUFS): left as it is.
        case silent
    }

    /// LUFS; `nil` for `.silent`.
    public var loudness: Double?
    /// dBTP of the clip as measured.
    public var truePeak: Double
    public var method: Method

    /// Measures a clip: integrated loudness with `IntegratedLoudness` (falling back to the repeated-clip
    /// measurement below 400 ms) and true peak with `TruePeak.estimate`.
    public static func measure(_ buffer: AudioBuffer) throws -> LoudnessMeasurement {
        let truePeak = TruePeak.estimate(buffer)
        guard truePeak > -.infinity else { return LoudnessMeasurement(loudness: nil, truePeak: truePeak, method: .silent) }
        let (loudness, method) = self.loudness(of: buffer)
        return LoudnessMeasurement(loudness: loudness, truePeak: truePeak, method: method)
    }

    /// The loudness part of `measure`, without the true peak.
    static func loudness(of buffer: AudioBuffer) -> (loudness: Double?, method: Method) {
        guard buffer.frameCount > 0 else { return (nil, .silent) }
        var meter = IntegratedLoudness(format: buffer.format)
        let blockFrames = buffer.format.frames(milliseconds: 400)
        let shortClip = buffer.frameCount < blockFrames
        let target = shortClip ? buffer.format.frames(milliseconds: 1200) : buffer.frameCount
        var added = 0
        buffer.samples.withUnsafeBufferPointer { samples in
            repeat {
                meter.add(samples)
                added += buffer.frameCount
            } while added < target
        }
        guard let loudness = meter.loudness() else { return (nil, .silent) }
        return (loudness, shortClip ? .shortClip : .integrated)
    }
}
