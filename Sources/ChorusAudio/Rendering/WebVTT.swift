public import ChorusWire
import Foundation

/// WebVTT captions for a timeline: one cue per message, with a `<v Speaker>` voice tag and the
/// message text (the speaker's name when there is none).
///
/// ```swift
/// let vtt = WebVTT.captions(for: timeline)
/// // WEBVTT
/// //
/// // 1
/// // 00:00:00.000 --> 00:00:02.300
/// // <v Sarah>Practice moved to 4:30.
/// ```
public enum WebVTT {
    /// One cue per message that takes time in the output, and one for a spoken intro and outro, in order of time.
    public static func captions(for timeline: Timeline) -> String {
        var cues: [(start: Double, end: Double, speaker: String, text: String)] = []
        func spoken(_ bookend: Timeline.Bookend?) {
            guard let bookend, let speaker = bookend.speaker, let text = bookend.text, bookend.endSample > bookend.startSample else { return }
            cues.append((bookend.start, bookend.end, speaker, text))
        }
        spoken(timeline.intro)
        for segment in timeline.segments where segment.endSample > segment.startSample {
            cues.append((segment.start, segment.end, segment.speaker, segment.text?.isEmpty == false ? segment.text! : segment.speaker))
        }
        spoken(timeline.outro)
        var out = "WEBVTT\n"
        for (number, cue) in cues.enumerated() {
            out += "\n\(number + 1)\n\(timestamp(cue.start)) --> \(timestamp(cue.end))\n"
            out += "<v \(MarkupText.escape(cue.speaker, quotes: false))>\(MarkupText.escape(singleParagraph(cue.text), quotes: false))\n"
        }
        return out
    }

    /// `hh:mm:ss.mmm`.
    public static func timestamp(_ seconds: Double) -> String {
        timestamp(milliseconds: Int((seconds * 1000).rounded()))
    }

    /// `hh:mm:ss.mmm` of a whole number of milliseconds (also the form of Vorbis `CHAPTERxxx` comments).
    static func timestamp(milliseconds: Int) -> String {
        let hours = milliseconds / 3_600_000
        let minutes = milliseconds / 60_000 % 60
        let secs = milliseconds / 1000 % 60
        let millis = milliseconds % 1000
        func pad(_ value: Int, _ width: Int) -> String {
            let text = String(value)
            return String(repeating: "0", count: max(0, width - text.count)) + text
        }
        return "\(pad(hours, 2)):\(pad(minutes, 2)):\(pad(secs, 2)).\(pad(millis, 3))"
    }

    /// Cue text may not contain blank lines (they end the cue).
    static func singleParagraph(_ text: String) -> String {
        text.split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }
            .filter { !$0.isEmpty }.joined(separator: "\n")
    }
}
