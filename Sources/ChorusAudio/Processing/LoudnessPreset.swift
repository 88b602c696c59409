/// Loudness targets people publish to, by name (`loudness_preset`, `--loudness-preset`): each sets the target
/// integrated loudness every message is normalized to (EBU R128, as `IntegratedLoudness` measures it) and the true-peak ceiling
/// (`RenderOptions.apply(_:)`). Gaps are digital silence, which the R128 gate leaves out, so the whole program
/// measures what each message does.
///
/// | preset | target | ceiling | for |
/// |---|---|---|---|
/// | `podcast` | −16 LUFS | −1 dBTP | stereo podcasts (Apple, AES TD1004) — Chorus's default |
/// | `mono-podcast` | −19 LUFS | −1 dBTP | mono podcasts (AES TD1004: 3 LU below stereo) |
/// | `streaming` | −14 LUFS | −1 dBTP | music and spoken word on Spotify, YouTube, Amazon |
/// | `broadcast` | −23 LUFS | −1 dBTP | EBU R128 broadcast |
/// | `audiobook` | −20 LUFS | −3 dBTP | ACX (Audible): RMS −23…−18 dB, peaks ≤ −3 dBFS, noise floor ≤ −60 dB |
///
/// ACX measures plain RMS over the whole file, sample peaks, and the noise floor as the RMS of the quietest half
/// second; speech normalized to −20 LUFS measures about −21 dB RMS with Chorus's gaps, a true-peak ceiling of −3 dBTP
/// keeps every sample under −3 dBFS, and gaps of digital silence are far under −60 dB (a recording's own noise is not
/// removed: its noise floor is the recording's).
///
/// ```swift
/// var options = RenderOptions()
/// options.apply(try LoudnessPreset(validating: "audiobook", field: "loudness_preset"))
/// ```
public enum LoudnessPreset: String, CaseIterable, Sendable, Codable {
    case podcast
    case monoPodcast = "mono-podcast"
    case streaming
    case broadcast
    case audiobook

    /// Target integrated loudness, LUFS.
    public var targetLoudness: Double {
        switch self {
        case .podcast: -16
        case .monoPodcast: -19
        case .streaming: -14
        case .broadcast: -23
        case .audiobook: -20
        }
    }

    /// True-peak ceiling, dBTP.
    public var truePeakCeiling: Double { self == .audiobook ? -3 : -1 }

    /// The preset named `name`.
    /// - Throws: `AudioError.invalidArgument` about `field`, listing the names.
    public init(validating name: String, field: String) throws {
        guard let preset = LoudnessPreset(rawValue: name.lowercased()) else {
            throw AudioError.invalid(field, name, "must be one of \(Self.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        self = preset
    }
}

extension RenderOptions {
    /// Normalizes to `preset`'s target loudness and true-peak ceiling (when `normalize` is on).
    public mutating func apply(_ preset: LoudnessPreset) {
        targetLoudness = preset.targetLoudness
        truePeakCeiling = preset.truePeakCeiling
    }
}
