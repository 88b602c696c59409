import Foundation

/// What normalization did to one clip.
public struct NormalizationResult: Sendable, Codable, Equatable {
    /// The clip as it came in.
    public var measured: LoudnessMeasurement
    /// Total gain applied, in dB (limiting not included).
    public var gainDB: Double
    /// Deepest limiter gain reduction, in dB (0 when the limiter did nothing).
    public var limiterDB: Double
    /// True peak after processing, in dBTP.
    public var truePeak: Double
    /// True when the boost was capped at `maxGainDB`, so the clip stays below the target.
    public var gainCapped: Bool = false
}

/// Brings a clip to a target integrated loudness (EBU R128) with its true peak at or below a ceiling.
///
/// 1. Measure integrated loudness and true peak (clips under 400 ms: see `LoudnessMeasurement.Method.shortClip`).
/// 2. Apply the gain that reaches `targetLUFS`, capped at `maxGainDB` of boost.
/// 3. If that would put the true peak above `truePeakCeiling`, run the look-ahead `PeakLimiter`,
///    re-measure, and repeat (at most six rounds) so both loudness and peak hold; as a last resort
///    scale down until the peak holds.
///
/// ```swift
/// let result = try LoudnessNormalizer(targetLUFS: -16).normalize(&clip)
/// print(result.gainDB, result.truePeak)
/// ```
public struct LoudnessNormalizer: Sendable {
    /// Target integrated loudness, LUFS (default −16).
    public var targetLUFS: Double
    /// Highest allowed true peak, dBTP (default −1).
    public var truePeakCeiling: Double
    /// Largest boost applied to a quiet clip, dB (default 40): more would mostly amplify noise.
    public var maxGainDB: Double

    public init(targetLUFS: Double = -16, truePeakCeiling: Double = -1, maxGainDB: Double = 40) {
        self.targetLUFS = targetLUFS
        self.truePeakCeiling = truePeakCeiling
        self.maxGainDB = maxGainDB
    }

    /// Normalizes `buffer` in place.
    public func normalize(_ buffer: inout AudioBuffer) throws -> NormalizationResult {
        let measured = try LoudnessMeasurement.measure(buffer)
        guard let loudness = measured.loudness else {
            return NormalizationResult(measured: measured, gainDB: 0, limiterDB: 0, truePeak: measured.truePeak)
        }
        var gainDB = min(maxGainDB, targetLUFS - loudness)
        var capped = targetLUFS - loudness > maxGainDB
        // Keep a little headroom under the ceiling for differences between true-peak meters.
        let safeCeiling = truePeakCeiling - Self.meterMargin
        if measured.truePeak + gainDB <= safeCeiling {
            Self.scale(&buffer.samples, by: gainDB)
            return NormalizationResult(
                measured: measured, gainDB: gainDB, limiterDB: 0, truePeak: measured.truePeak + gainDB,
                gainCapped: capped)
        }

        // The gain alone would overshoot the ceiling: limit, re-measure, and correct. Limiting costs
        // loudness, so the gain is searched (secant steps on measured loudness) until it is within 0.3 LU;
        // only then is the true peak measured (it rarely needs a lower ceiling, and costs more than loudness).
        // The further the peaks go over, the more loudness limiting costs: the first round starts above the plain
        // gain by `firstGuess` per dB of excess past the first, at most 3 dB (a few clicks can make a large excess
        // that costs little loudness). On the benchmark's 48 espeak-ng clips that need limiting, 31 then land within
        // 0.3 LU in the first round, against 14 from the plain gain; a round is a limiter pass and a measurement.
        let excess = measured.truePeak + gainDB - safeCeiling
        gainDB = min(maxGainDB, gainDB + min(3, Self.firstGuess * max(0, excess - 1)))
        let original = buffer.samples
        let peaks = original.withUnsafeBufferPointer { PeakLimiter.blockPeaks($0, channels: buffer.format.channels) }
        var ceilingDB = safeCeiling - 0.3
        var limiterDB = 0.0
        // What the last round reached; its true peak only once it has been measured.
        var reached: Double?
        var truePeak: Double?
        var previous: (gain: Double, loudness: Double)?
        for _ in 0..<6 {
            let limiter = PeakLimiter(format: buffer.format, ceiling: Float(pow(10, ceilingDB / 20)))
            buffer.samples = original.withUnsafeBufferPointer { original in
                [Float](unsafeUninitializedCapacity: original.count) { output, count in
                    limiterDB = limiter.process(original, scaledBy: Self.factor(gainDB), into: output, blockPeaks: peaks)
                    count = original.count
                }
            }
            truePeak = nil
            reached = LoudnessMeasurement.loudness(of: buffer).loudness
            guard let reached else { break }
            let shortfall = targetLUFS - reached
            if abs(shortfall) <= 0.3 || (shortfall > 0 && gainDB >= maxGainDB) {
                let peak = TruePeak.estimate(buffer)
                truePeak = peak
                let peakExcess = peak - safeCeiling
                if peakExcess > 0 {
                    ceilingDB -= peakExcess + 0.1
                    continue
                }
                // Done when the final plain gain (below) can close the gap under the ceiling.
                if shortfall <= -peakExcess + 0.02 || gainDB >= maxGainDB { break }
            }
            // Limiting flattens the loudness curve: measured on speech, a dB of gain past the point where
            // limiting costs `loss` dB of loudness adds about 1 / (1 + 0.8·loss) dB. The first step uses
            // that slope; later ones the secant through the last two rounds.
            let loss = max(0, gainDB - (reached - loudness))
            var step = shortfall * (1 + 0.8 * loss)
            if let previous, abs(reached - previous.loudness) > 0.05 {
                step = shortfall * (gainDB - previous.gain) / (reached - previous.loudness)
            }
            previous = (gainDB, reached)
            gainDB = min(maxGainDB, gainDB + max(-6, min(12, step)))
        }
        var peak = truePeak ?? TruePeak.estimate(buffer)
        // The search stops within 0.3 LU; a plain gain for the rest lands on the target (integrated loudness and
        // true peak both move by exactly that gain). Upwards it fits under the ceiling: the limiter left 0.3 dB.
        if let reached, peak.isFinite {
            var residual = targetLUFS - reached
            if residual > 0 { residual = max(0, min(residual, safeCeiling - peak, maxGainDB - gainDB)) }
            if abs(residual) >= 0.005 {
                Self.scale(&buffer.samples, by: residual)
                gainDB += residual
                peak += residual
            }
            // Limiting can take so much loudness that even the largest boost leaves the clip short.
            if gainDB >= maxGainDB - 0.005 && targetLUFS - (reached + residual) > 0.3 { capped = true }
        }
        if peak > safeCeiling {
            let correction = safeCeiling - peak
            Self.scale(&buffer.samples, by: correction)
            gainDB += correction
            peak += correction
        }
        return NormalizationResult(measured: measured, gainDB: gainDB, limiterDB: limiterDB, truePeak: peak, gainCapped: capped)
    }

    /// Extra gain for the first limited round per dB of true peak over the ceiling past the first (fitted on speech).
    static let firstGuess = 0.45

    /// dB kept between the ceiling and `TruePeak.estimate`, covering its difference from libebur128's meter.
    static let meterMargin = 0.15

    /// The linear factor of a gain in dB.
    static func factor(_ decibels: Double) -> Float { Float(pow(10, decibels / 20)) }

    static func scale(_ samples: inout [Float], by decibels: Double) {
        let factor = Self.factor(decibels)
        guard factor != 1 else { return }
        samples.withUnsafeMutableBufferPointer { buffer in
            for index in buffer.indices { buffer[index] *= factor }
        }
    }
}
