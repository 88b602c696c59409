import ChorusAudio
public import ChorusWire

/// How a Piper voice speaks: `voice_settings.piper` of a conversation, over the voice's own defaults (its config's
/// `inference`). The one owner of these settings' names, ranges and defaults.
///
/// - `length_scale`: 0.25–4, how long each phoneme lasts (above 1 slower, below 1 faster);
/// - `noise_scale`: 0–2, variation in the sound (0 is flat);
/// - `noise_w`: 0–2, variation in phoneme lengths (0 gives each phoneme its mean length);
/// - `speaker`: 0 up to the voice's speaker count, or a speaker's name (multi-speaker voices).
///
/// The noise of a prepared voice is the same on every call, so the same text with the same settings gives the same
/// audio, sample for sample.
///
/// ```swift
/// let settings = try PiperSettings(["length_scale": .number(1.2)], voice: voice)
/// ```
public struct PiperSettings: Sendable, Equatable, Hashable {
    public var lengthScale: Double
    public var noiseScale: Double
    public var noiseW: Double
    public var speaker: Int

    public static let lengthScaleRange = 0.25...4.0
    public static let noiseRange = 0.0...2.0

    /// Checked values.
    /// - Throws: `VoiceError` (`.badRequest`) naming the setting and its range.
    public init(lengthScale: Double, noiseScale: Double, noiseW: Double, speaker: Int = 0) throws {
        try Self.check("length_scale", lengthScale, Self.lengthScaleRange)
        try Self.check("noise_scale", noiseScale, Self.noiseRange)
        try Self.check("noise_w", noiseW, Self.noiseRange)
        self.lengthScale = lengthScale
        self.noiseScale = noiseScale
        self.noiseW = noiseW
        self.speaker = speaker
    }

    /// `settings` (a conversation's `voice_settings.piper`) over `voice`'s defaults.
    /// - Throws: `VoiceError` (`.badRequest`) naming an unknown setting, a value of the wrong type or out of range,
    ///   or a speaker the voice does not have.
    public init(_ settings: [String: JSONValue], voice: PiperVoice) throws {
        var result = voice.defaults
        for (key, value) in settings {
            func number() throws -> Double {
                guard let number = value.number else { throw Self.bad("\(key) must be a number") }
                return number
            }
            switch key {
            case "length_scale": result.lengthScale = try number()
            case "noise_scale": result.noiseScale = try number()
            case "noise_w": result.noiseW = try number()
            case "speaker":
                if let name = value.string {
                    guard let id = voice.speakerNames[name] else {
                        throw Self.bad(
                            "speaker \"\(name)\" is not one of \(voice.name)'s (\(voice.speakerNames.keys.sorted().joined(separator: ", ")))")
                    }
                    result.speaker = id
                } else if let number = value.number, number == number.rounded(), (0..<Double(voice.speakers)).contains(number) {
                    result.speaker = Int(number)
                } else {
                    throw Self.bad(
                        "speaker must be a speaker's name or a number from 0 to \(voice.speakers - 1) (\(voice.name) has \(voice.speakers))")
                }
            default:
                throw Self.bad("unknown setting \"\(key)\" (known: length_scale, noise_scale, noise_w, speaker)")
            }
        }
        self = try PiperSettings(
            lengthScale: result.lengthScale, noiseScale: result.noiseScale, noiseW: result.noiseW,
            speaker: result.speaker)
    }

    /// What the cache key and the render id carry.
    var canonical: [String: JSONValue] {
        [
            "length_scale": .number(lengthScale), "noise_scale": .number(noiseScale), "noise_w": .number(noiseW),
            "speaker": .number(Double(speaker)),
        ]
    }

    private static func check(_ name: String, _ value: Double, _ range: ClosedRange<Double>) throws {
        guard value.isFinite, range.contains(value) else {
            throw bad("\(name) \(value) is outside \(range.lowerBound)–\(range.upperBound)")
        }
    }

    private static func bad(_ message: String) -> VoiceError {
        VoiceError(.badRequest, provider: "piper", message: "voice_settings.piper: " + message)
    }
}
