import ChorusAudio
public import ChorusWire
import Foundation

extension TranscriptionFormat {
    /// `transcription` written in this format: the text (with a final newline), `{"text"}`, the whole
    /// transcription, or captions with one cue per segment (times as `WebVTT.timestamp` writes them; WebVTT cue text
    /// escaped as the render captions are).
    public func render(_ transcription: Transcription) -> String {
        switch self {
        case .text:
            return transcription.text + "\n"
        case .json:
            return Self.json(["text": transcription.text])
        case .verboseJSON:
            return Self.json(transcription)
        case .srt, .vtt:
            var out = self == .vtt ? "WEBVTT\n" : ""
            for (index, segment) in (transcription.segments ?? []).enumerated() {
                if self == .vtt || index > 0 { out += "\n" }
                out += "\(index + 1)\n\(timestamp(segment.start)) --> \(timestamp(segment.end))\n"
                let text = segment.text.split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }
                    .filter { !$0.isEmpty }.joined(separator: " ")  // a blank line would end the cue
                out += (self == .vtt ? MarkupText.escape(text, quotes: false) : text) + "\n"
            }
            return out
        }
    }

    /// `hh:mm:ss.mmm`, with SubRip's comma before the milliseconds.
    private func timestamp(_ seconds: Double) -> String {
        let text = WebVTT.timestamp(max(0, seconds))
        return self == .srt ? text.replacingOccurrences(of: ".", with: ",") : text
    }

    private static func json(_ value: some Encodable) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return String(decoding: (try? encoder.encode(value)) ?? Data("{}".utf8), as: UTF8.self) + "\n"
    }
}
