public import ChorusWire
public import Foundation

/// Where a message's audio comes from.
public enum ClipSource: Sendable {
    /// An audio file in any format FFmpeg decodes.
    case file(URL)
    /// Files played back to back, with exact silences between them where asked (a long text synthesized in chunks,
    /// a text with pauses).
    case parts([ClipPart])
    /// Encoded audio in memory (a provider response).
    case encoded(Data)
    /// PCM already decoded.
    case pcm(AudioBuffer)
}

/// One part of a `ClipSource.parts` message.
public enum ClipPart: Sendable, Equatable {
    /// An audio file in any format FFmpeg decodes.
    case file(URL)
    /// Digital silence, this long to the nearest sample of the output rate.
    case silence(seconds: Double)
}

/// One message ready to render.
///
/// ```swift
/// let message = RenderMessage(speaker: "Sarah", source: .file(url), label: "clips/sarah-1.mp3", text: "Hi!")
/// ```
public struct RenderMessage: Sendable {
    public var speaker: String
    public var source: ClipSource
    /// How the timeline's `source` and error messages name the clip.
    public var label: String
    public var text: String?
    /// Voice id, for synthesized messages.
    public var voice: String?
    /// True when synthesized with the fallback voice.
    public var fallback: Bool
    /// Word timings within the clip, when known.
    public var words: [WordTiming]?
    /// True when `text` (and `words`) are what a speech recognizer heard in the clip.
    public var transcribed: Bool
    /// Frames the source must decode to, at its own rate (all files together), when known in advance
    /// (a cached clip): a different count is an error, so a damaged cache entry is never rendered.
    public var expectedSourceFrames: Int?
    /// How warnings and errors name it when it is not message `index` (`intro`, `outro`).
    public var subject: String?
    /// Clean-up run on the decoded clip before it is trimmed and normalized (recorded voice notes).
    public var cleanup: VoiceCleanup?
    /// What its voice said it left out of the text, each a warning of the render, after the message's subject.
    public var notes: [String] = []

    public init(
        speaker: String, source: ClipSource, label: String, text: String? = nil,
        voice: String? = nil, fallback: Bool = false, words: [WordTiming]? = nil, expectedSourceFrames: Int? = nil,
        transcribed: Bool = false
    ) {
        self.speaker = speaker
        self.source = source
        self.label = label
        self.text = text
        self.voice = voice
        self.fallback = fallback
        self.words = words
        self.expectedSourceFrames = expectedSourceFrames
        self.transcribed = transcribed
    }

    /// How errors and warnings name message `index` of `speaker`: `messages[3] (Marcus)`. The one form, engine and
    /// voices alike.
    public static func subject(index: Int, speaker: String) -> String { "messages[\(index)] (\(speaker))" }
}
