import Foundation

/// Music under a whole render (`music` in a conversation, `--music`): from the first sample to a tail of
/// `fadeOutMilliseconds` after the last message or outro, looped if shorter, lowered while anyone speaks.
///
/// - Level: the bed is measured once (EBU R128 integrated loudness of its first minute, or all of it if shorter) and
///   set to the render's target loudness plus `levelLU` while nobody speaks.
/// - Ducking: under every message, intro and outro it is `duckDB` lower. The dip begins 250 ms before the first sample
///   of speech and is complete when it starts (the look-ahead: the render knows where each message begins), holds
///   until 200 ms after the speech ends, then rises back over 800 ms, each ramp a raised cosine in decibels: the
///   shape of a radio host's ducker. A gap shorter than the hold, release and attack together stays ducked.
/// - Fades: in over `fadeInMilliseconds` from the first sample; out over `fadeOutMilliseconds` after the last
///   speech, a tail the timeline counts.
/// - Looping: each pass joins the next with a 25 ms linear crossfade (no click where a bed that was not made to loop
///   starts again; one made to loop keeps its beat within 25 ms a pass). Without `loop`, a bed shorter than the
///   program stops where it ends.
/// - Peaks: messages are normalized to a true-peak ceiling lowered by the bed's own true peak under speech, so that
///   speech and bed together stay under the render's ceiling; any sample over it is limited.
/// - Only what the program needs is decoded: a bed longer than the program is read as the render goes.
///
/// ```swift
/// var bed = MusicBed(source: .file(URL(fileURLWithPath: "bed.mp3")), label: "bed.mp3")
/// bed.levelLU = -18
/// ```
public struct MusicBed: Sendable {
    /// The bed's audio: a file or encoded bytes (any format FFmpeg decodes), or samples.
    public var source: ClipSource
    /// How the timeline and errors name it (the path as written).
    public var label: String
    /// Its loudness relative to the target while nobody speaks, LU (`levelRange`).
    public var levelLU: Double
    /// How far it dips under speech, dB (`duckRange`).
    public var duckDB: Double
    /// Fade in from the start, milliseconds (`fadeRange`).
    public var fadeInMilliseconds: Int
    /// Fade out after the last speech, milliseconds (`fadeRange`): also the length of the tail.
    public var fadeOutMilliseconds: Int
    /// Whether a bed shorter than the program starts again.
    public var loop: Bool

    public static let defaultLevelLU = -20.0
    public static let levelRange = -40.0...0.0
    public static let defaultDuckDB = 12.0
    public static let duckRange = 0.0...40.0
    public static let defaultFadeInMilliseconds = 1500
    public static let defaultFadeOutMilliseconds = 3000
    public static let fadeRange = 0...60_000

    /// The ducker's look-ahead (the dip is complete when speech starts), hold and release, milliseconds.
    static let attackMilliseconds = 250, holdMilliseconds = 200, releaseMilliseconds = 800
    /// How long each loop pass overlaps the next.
    static let loopCrossfadeMilliseconds = 25
    /// How much of the bed its loudness is measured over.
    static let measuredSeconds = 60.0

    public init(
        source: ClipSource, label: String, levelLU: Double = defaultLevelLU, duckDB: Double = defaultDuckDB,
        fadeInMilliseconds: Int = defaultFadeInMilliseconds, fadeOutMilliseconds: Int = defaultFadeOutMilliseconds, loop: Bool = true
    ) {
        self.source = source
        self.label = label
        self.levelLU = levelLU
        self.duckDB = duckDB
        self.fadeInMilliseconds = fadeInMilliseconds
        self.fadeOutMilliseconds = fadeOutMilliseconds
        self.loop = loop
    }

    /// Checks every setting; `field` names the bed (`music`).
    /// - Throws: `AudioError.invalidArgument` naming the field (`music.level_lu`).
    public func validate(field: String = "music") throws {
        guard levelLU.isFinite, Self.levelRange.contains(levelLU) else {
            throw AudioError.invalid(
                "\(field).level_lu", levelLU, "must be between \(Int(Self.levelRange.lowerBound)) and \(Int(Self.levelRange.upperBound)) LU")
        }
        guard duckDB.isFinite, Self.duckRange.contains(duckDB) else {
            throw AudioError.invalid(
                "\(field).duck_db", duckDB, "must be between \(Int(Self.duckRange.lowerBound)) and \(Int(Self.duckRange.upperBound)) dB")
        }
        for (name, value) in [("fade_in_ms", fadeInMilliseconds), ("fade_out_ms", fadeOutMilliseconds)] where !Self.fadeRange.contains(value) {
            throw AudioError.invalid(
                "\(field).\(name)", value, "must be between \(Self.fadeRange.lowerBound) and \(Self.fadeRange.upperBound) milliseconds")
        }
        if case .parts = source { throw AudioError.invalid("\(field).audio", label, "must be one clip") }
    }
}
