import CEbur128
public import ChorusAudio
import Foundation

/// An EBU R128 meter (libebur128): integrated loudness (gated, LUFS) and true peak (dBTP).
///
/// Rendering measures with the faster `IntegratedLoudness` and `TruePeak.estimate`; this meter is the
/// oversampling true-peak reference and the tests' referee for both.
///
/// Owns one `ebur128_state`; `deinit` destroys it. Feed it with `add(_:)`, then read the results.
///
/// ```swift
/// let meter = try LoudnessMeter(format: clip.format)
/// try clip.samples.withUnsafeBufferPointer { try meter.add($0) }
/// meter.integratedLoudness   // e.g. -19.7 (LUFS), nil for silence or < 400 ms
/// meter.truePeak             // e.g. -2.1 (dBTP)
/// ```
public final class LoudnessMeter {
    public let format: AudioFormat
    private var state: UnsafeMutablePointer<ebur128_state>?

    /// - Parameters:
    ///   - format: the format of the samples that will be added.
    ///   - truePeak: also measure true peak (4× oversampled below 96 kHz); costs time.
    public init(format: AudioFormat, truePeak: Bool = true) throws {
        self.format = format
        var mode = EBUR128_MODE_I.rawValue
        if truePeak { mode |= EBUR128_MODE_TRUE_PEAK.rawValue }
        state = ebur128_init(UInt32(format.channels), UInt(format.sampleRate), Int32(mode))
        guard state != nil else {
            throw AudioError(.invalidArgument, subject: "loudness meter", reason: "libebur128 cannot measure \(format)")
        }
    }

    deinit { ebur128_destroy(&state) }

    /// Adds interleaved frames.
    /// - Throws: `AudioError` when libebur128 refuses them (out of memory).
    public func add(_ samples: UnsafeBufferPointer<Float>) throws {
        guard let base = samples.baseAddress, samples.count >= format.channels else { return }
        try Ebur128.check(ebur128_add_frames_float(state, base, samples.count / format.channels), "ebur128_add_frames_float")
    }

    /// Gated integrated loudness in LUFS; `nil` when nothing passed the gates (silence, or < 400 ms).
    public func integratedLoudness() throws -> Double? {
        var value = -Double.infinity
        try Ebur128.check(ebur128_loudness_global(state, &value), "ebur128_loudness_global")
        return value.isFinite ? value : nil
    }

    /// The highest true peak over all channels, in dBTP (−∞ for silence).
    /// - Throws: `AudioError` when the meter was made without true-peak measurement.
    public func truePeak() throws -> Double {
        var highest = 0.0
        for channel in 0..<format.channels {
            var value = 0.0
            try Ebur128.check(ebur128_true_peak(state, UInt32(channel), &value), "ebur128_true_peak")
            highest = max(highest, value)
        }
        return 20 * log10(highest)
    }
}

/// The one place libebur128's return codes become `AudioError`s.
enum Ebur128 {
    static func check(_ code: Int32, _ operation: String) throws {
        guard code != Int32(EBUR128_SUCCESS.rawValue) else { return }
        let meaning: String
        switch code {
        case Int32(EBUR128_ERROR_NOMEM.rawValue): meaning = "out of memory"
        case Int32(EBUR128_ERROR_INVALID_MODE.rawValue): meaning = "the meter was not set up for this measurement"
        case Int32(EBUR128_ERROR_INVALID_CHANNEL_INDEX.rawValue): meaning = "no such channel"
        default: meaning = "error \(code)"
        }
        throw AudioError(.invalidArgument, subject: "loudness meter", reason: "\(operation) failed", underlying: meaning)
    }
}
