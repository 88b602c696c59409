/// Processing stages whose time `chorus-bench` reports.
public enum Stage: String, CaseIterable, Sendable, Codable {
    case decode, resample, cleanup, trim, loudness, stitch, encode, waveform
}
