import Foundation

/// Clean-up for recorded voice notes (`cleanup` on a message or the conversation, `--cleanup`): FFmpeg's own filters,
/// run in process through libavfilter, before the message is trimmed and normalized.
///
/// | step | filter | default |
/// |---|---|---|
/// | rumble, handling noise, wind | `highpass` (4 poles) | 80 Hz |
/// | clicks and pops | `adeclick` | on |
/// | steady noise (hiss, hum, room) | `afftdn`, told the floor measured (the quietest tenth of 50 ms) | 12 dB less |
/// | loud and quiet stretches within the message | `dynaudnorm` (400 ms frames, at most 12 dB) | on |
/// | long pauses | quiet between sounds (20 ms windows 30 dB under the loudest and under −40 dBFS) | shortened to 0.7 s |
///
/// Off unless asked for: on clean studio speech the de-noiser and leveller change what was already right, so no
/// default only ever helps. It applies to recorded clips; a synthesized message is already clean.
///
/// ```swift
/// var cleanup = VoiceCleanup()
/// cleanup.maxSilenceMilliseconds = 1_000
/// ```
public struct VoiceCleanup: Sendable, Equatable {
    /// The high-pass corner, Hz (`highpassRange`; 0: off).
    public var highpassHz: Int
    /// How much steady noise is taken out, dB (`noiseReductionRange`; 0: off).
    public var noiseReductionDB: Double
    /// Whether clicks are removed.
    public var declick: Bool
    /// Whether loud and quiet stretches are evened out within the message.
    public var level: Bool
    /// Pauses longer than this are shortened to it, milliseconds (`maxSilenceRange`; `nil`: kept).
    public var maxSilenceMilliseconds: Int?

    public static let highpassRange = 0...300
    public static let noiseReductionRange = 0.0...40.0
    public static let maxSilenceRange = 200...10_000

    public init(
        highpassHz: Int = 80, noiseReductionDB: Double = 12, declick: Bool = true, level: Bool = true,
        maxSilenceMilliseconds: Int? = 700
    ) {
        self.highpassHz = highpassHz
        self.noiseReductionDB = noiseReductionDB
        self.declick = declick
        self.level = level
        self.maxSilenceMilliseconds = maxSilenceMilliseconds
    }

    /// The clean-up a request or file asks for: `on` alone (`true`: the defaults; `false` or nothing: none) or any of
    /// the settings (`maxSilenceMilliseconds` 0: pauses kept), checked — the one reading of `cleanup` for conversation
    /// files and the service alike.
    /// - Throws: `AudioError.invalidArgument` naming the field (`cleanup.highpass_hz`).
    public static func requested(
        on: Bool?, highpassHz: Int? = nil, noiseReductionDB: Double? = nil, declick: Bool? = nil, level: Bool? = nil,
        maxSilenceMilliseconds: Int? = nil, field: String = "cleanup"
    ) throws -> VoiceCleanup? {
        let anySetting = highpassHz != nil || noiseReductionDB != nil || declick != nil || level != nil || maxSilenceMilliseconds != nil
        guard on ?? anySetting else { return nil }
        var cleanup = VoiceCleanup()
        if let highpassHz { cleanup.highpassHz = highpassHz }
        if let noiseReductionDB { cleanup.noiseReductionDB = noiseReductionDB }
        if let declick { cleanup.declick = declick }
        if let level { cleanup.level = level }
        if let maxSilenceMilliseconds { cleanup.maxSilenceMilliseconds = maxSilenceMilliseconds == 0 ? nil : maxSilenceMilliseconds }
        try cleanup.validate(field: field)
        return cleanup
    }

    /// Checks every setting; `field` names them (`cleanup`, `messages[2].cleanup`).
    /// - Throws: `AudioError.invalidArgument` naming the field (`cleanup.highpass_hz`).
    public func validate(field: String = "cleanup") throws {
        guard Self.highpassRange.contains(highpassHz) else {
            throw AudioError.invalid("\(field).highpass_hz", highpassHz, "must be between 0 and 300 Hz")
        }
        guard noiseReductionDB.isFinite, Self.noiseReductionRange.contains(noiseReductionDB) else {
            throw AudioError.invalid("\(field).noise_reduction_db", noiseReductionDB, "must be between 0 and 40 dB")
        }
        if let maxSilenceMilliseconds, !Self.maxSilenceRange.contains(maxSilenceMilliseconds) {
            throw AudioError.invalid("\(field).max_silence_ms", maxSilenceMilliseconds, "must be between 200 and 10000 milliseconds")
        }
    }

    /// The filter chains, in FFmpeg's syntax, before and after the noise floor is measured (`nil`: none).
    var filterChains: (first: String?, second: (Double) -> String?) {
        var first: [String] = []
        // Two 2-pole stages: 24 dB an octave, so rumble an octave and more below is 30 dB down.
        if highpassHz > 0 { first.append("highpass=f=\(highpassHz):p=2,highpass=f=\(highpassHz):p=2") }
        if declick { first.append("adeclick") }
        let reduction = noiseReductionDB
        let level = self.level
        return (
            first.isEmpty ? nil : first.joined(separator: ","),
            { floor in
                var second: [String] = []
                // afftdn told where the noise floor is (its own tracking reduced white noise by under 1 dB in FFmpeg 5.1).
                if reduction > 0 { second.append("afftdn=nr=\(max(0.01, reduction)):nf=\(Int(min(-20, max(-80, floor.rounded()))))") }
                // Frames whose peak is under −34 dBFS (pauses, room noise) are not raised.
                if level { second.append("dynaudnorm=f=400:g=11:p=0.9:m=4:t=0.02") }
                return second.isEmpty ? nil : second.joined(separator: ",")
            }
        )
    }

    /// `audio` cleaned (possibly shorter, when pauses were shortened).
    /// - Throws: `AudioError` about `subject` when libavfilter fails.
    public func apply(to audio: AudioBuffer, subject: String) throws -> AudioBuffer {
        guard audio.frameCount > 0 else { return audio }
        var cleaned = audio
        let chains = filterChains
        if let first = chains.first {
            cleaned = AudioBuffer(
                format: audio.format, samples: try AudioFilterGraph(first, format: audio.format, subject: subject).process(cleaned.samples))
        }
        if let second = chains.second(Self.noiseFloor(of: cleaned)) {
            cleaned = AudioBuffer(
                format: audio.format, samples: try AudioFilterGraph(second, format: audio.format, subject: subject).process(cleaned.samples))
        }
        if let maxSilenceMilliseconds {
            cleaned = Self.shortenPauses(cleaned, to: cleaned.format.frames(milliseconds: maxSilenceMilliseconds))
        }
        return cleaned
    }

    /// The noise floor, dBFS: the RMS of the quietest tenth of 50 ms windows (digital silence left out).
    static func noiseFloor(of audio: AudioBuffer) -> Double {
        let window = max(1, audio.format.frames(milliseconds: 50)) * audio.format.channels
        let levels = stride(from: 0, to: audio.samples.count - window + 1, by: window).compactMap { start -> Double? in
            let power = audio.samples[start..<(start + window)].reduce(0) { $0 + Double($1) * Double($1) } / Double(window)
            return power > 1e-12 ? 10 * log10(power) : nil
        }.sorted()
        return levels.isEmpty ? -80 : levels[levels.count / 10]
    }

    /// Every pause between sounds longer than `maximum` frames shortened to `maximum`: its middle cut out, the two
    /// sides joined with a 5 ms crossfade. A pause is a run of 20 ms windows whose RMS is 30 dB under the loudest
    /// window's and under −40 dBFS; the quiet before the first sound and after the last is left to trimming.
    static func shortenPauses(_ audio: AudioBuffer, to maximum: Int) -> AudioBuffer {
        let format = audio.format
        let channels = format.channels
        let window = max(1, format.frames(milliseconds: 20))
        let windows = audio.frameCount / window
        guard windows > 2 else { return audio }
        let levels = (0..<windows).map { index -> Double in
            let slice = audio.samples[(index * window * channels)..<((index + 1) * window * channels)]
            return (slice.reduce(0) { $0 + Double($1) * Double($1) } / Double(slice.count)).squareRoot()
        }
        let threshold = min(pow(10, -40.0 / 20), (levels.max() ?? 0) * pow(10, -30.0 / 20))
        var cuts: [Range<Int>] = []  // frames to remove
        var index = 0
        while index < windows {
            guard levels[index] < threshold else {
                index += 1
                continue
            }
            let start = index
            while index < windows && levels[index] < threshold { index += 1 }
            // Only pauses with sound on both sides.
            guard start > 0 && index < windows else { continue }
            let length = (index - start) * window
            if length > maximum {
                let first = start * window + maximum / 2
                cuts.append(first..<(first + length - maximum))
            }
        }
        guard !cuts.isEmpty else { return audio }
        let fade = format.frames(milliseconds: 5)
        var samples: [Float] = []
        samples.reserveCapacity(audio.samples.count)
        var position = 0
        for cut in cuts {
            let join = min(fade, audio.frameCount - cut.upperBound, cut.lowerBound - position)
            samples.append(contentsOf: audio.samples[(position * channels)..<((cut.lowerBound - join) * channels)])
            for frame in 0..<join {
                let weight = Float(frame + 1) / Float(join + 1)
                for channel in 0..<channels {
                    let before = audio.samples[(cut.lowerBound - join + frame) * channels + channel]
                    let after = audio.samples[(cut.upperBound + frame) * channels + channel]
                    samples.append(before * (1 - weight) + after * weight)
                }
            }
            position = cut.upperBound + join
        }
        samples.append(contentsOf: audio.samples[(position * channels)...])
        return AudioBuffer(format: format, samples: samples)
    }
}
