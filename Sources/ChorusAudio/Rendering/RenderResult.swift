public import ChorusWire
public import Foundation

/// What a render produced besides its files.
public struct RenderResult: Sendable {
    public var timeline: Timeline
    public var waveform: WaveformPeaks?
    /// The encoded audio, when `RenderOutputs.keepAudioInMemory` asked for it.
    public var audio: Data?
    /// CPU time per stage, summed over parallel workers.
    public var timings: StageTimings
    /// Wall-clock time of the whole render, seconds.
    public var wallSeconds: Double
    /// Per-message loudness decisions, by message index.
    public var normalization: [NormalizationResult?]
    /// Things the user should know that did not stop the render (e.g. a silent clip).
    public var warnings: [String]
}
