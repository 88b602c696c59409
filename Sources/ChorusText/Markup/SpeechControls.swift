import Foundation

/// Controls inside a message's text that change how it is spoken and are never shown: `[pause:800ms]`,
/// `[pause:1.5s]` — exactly that much digital silence at that point, the text synthesized in parts around it.
///
/// The words on screen (timeline, captions, chapters, the player) are the text without its controls
/// (`visible(_:)`); other bracketed text (`[laughs]`, an ElevenLabs v3 audio tag) is left as typed.
///
/// ```swift
/// try SpeechControls.parts(of: "Wait. [pause:1.5s] Okay.", field: "text")   // [.text("Wait."), .pause(seconds: 1.5), .text("Okay.")]
/// SpeechControls.visible("Wait. [pause:1.5s] Okay.")                         // "Wait. Okay."
/// ```
public enum SpeechControls {
    public enum Part: Sendable, Equatable {
        case text(String)
        case pause(seconds: Double)
    }

    /// The longest pause one control may ask for.
    public static let maximumPauseSeconds = 60.0

    /// A control found in a text: where it is and what it asks, or why it is malformed.
    private struct Found {
        var range: Range<String.Index>
        var seconds: Double?
        var problem: String?
    }

    private static let pausePattern = try! NSRegularExpression(
        pattern: #"^\[\s*pause\s*:\s*([0-9]+(?:\.[0-9]+)?)\s*(ms|s)\s*\]"#, options: [.caseInsensitive])

    private static let opening = try! NSRegularExpression(pattern: #"\[\s*pause\s*:"#, options: [.caseInsensitive])

    /// Every `[pause:…` in `text`, well-formed or not, in order (`[pause]` without a colon is not one: ElevenLabs v3
    /// takes it as an audio tag, and it is passed on as typed).
    private static func controls(in text: String) -> [Found] {
        var found: [Found] = []
        var search = text.startIndex
        while search < text.endIndex,
            let match = opening.firstMatch(in: text, range: NSRange(search..<text.endIndex, in: text)),
            let open = Range(match.range, in: text)
        {
            let rest = String(text[open.lowerBound...])
            let nsRest = rest as NSString
            if let match = pausePattern.firstMatch(in: rest, range: NSRange(location: 0, length: nsRest.length)),
                let end = Range(match.range, in: rest)?.upperBound
            {
                let value = Double(nsRest.substring(with: match.range(at: 1))) ?? 0
                let unit = nsRest.substring(with: match.range(at: 2)).lowercased()
                let seconds = unit == "ms" ? value / 1_000 : value
                let upper = text.index(open.lowerBound, offsetBy: rest.distance(from: rest.startIndex, to: end))
                var problem: String?
                if seconds <= 0 {
                    problem = "a pause must be longer than 0"
                } else if seconds > maximumPauseSeconds {
                    problem = "a pause may be at most \(Int(maximumPauseSeconds)) s"
                }
                found.append(Found(range: open.lowerBound..<upper, seconds: seconds, problem: problem))
                search = upper
            } else {
                let close = text[open.upperBound...].firstIndex(of: "]").map { text.index(after: $0) }
                let upper = close ?? text.endIndex
                found.append(
                    Found(
                        range: open.lowerBound..<upper, seconds: nil,
                        problem: close == nil
                            ? "unterminated: a pause is [pause:800ms] or [pause:1.5s]"
                            : "a pause is [pause:800ms] or [pause:1.5s] (milliseconds or seconds, more than 0, at most 60 s)"))
                search = upper
            }
        }
        return found
    }

    /// Whether `text` has any control (well-formed or not).
    public static func contains(_ text: String) -> Bool {
        opening.firstMatch(in: text, range: NSRange(text.startIndex..<text.endIndex, in: text)) != nil
    }

    /// `text` split at its controls: the text between them (trimmed), and pauses (consecutive ones added up).
    /// - Throws: `TextError` whose subject is `field` and whose reason names the control, its
    ///   position (the character, from 1) and what is wrong — a malformed or out-of-range pause, or a pause with no
    ///   words before or after it (silence around a message is its `gap_ms`).
    public static func parts(of text: String, field: String) throws -> [Part] {
        var parts: [Part] = []
        var position = text.startIndex
        func fail(_ control: Found, _ reason: String) -> TextError {
            let character = text.distance(from: text.startIndex, to: control.range.lowerBound) + 1
            let shown = String(text[control.range].prefix(40))
            return TextError(subject: field, reason: "\(shown) at character \(character): \(reason)")
        }
        for control in controls(in: text) {
            if let problem = control.problem { throw fail(control, problem) }
            let before = text[position..<control.range.lowerBound].trimmingCharacters(in: .whitespacesAndNewlines)
            if !before.isEmpty { parts.append(.text(before)) }
            guard parts.contains(where: { if case .text = $0 { true } else { false } }) else {
                throw fail(control, "a pause goes between words (the silence before a message is its gap_ms)")
            }
            if case .pause(let seconds)? = parts.last {
                parts[parts.count - 1] = .pause(seconds: seconds + (control.seconds ?? 0))
            } else {
                parts.append(.pause(seconds: control.seconds ?? 0))
            }
            position = control.range.upperBound
        }
        let rest = text[position...].trimmingCharacters(in: .whitespacesAndNewlines)
        if !rest.isEmpty { parts.append(.text(rest)) }
        if case .pause? = parts.last, let last = controls(in: text).last {
            throw fail(last, "a pause goes between words (the silence after a message is the next one's gap_ms)")
        }
        return parts
    }

    /// The text as shown: well-formed controls removed, the text either side joined by one space (or none at the
    /// text's ends); anything else as typed.
    public static func visible(_ text: String) -> String {
        guard contains(text) else { return text }
        var shown = ""
        var position = text.startIndex
        for control in controls(in: text) where control.problem == nil {
            shown += text[position..<control.range.lowerBound]
            while shown.last?.isWhitespace == true { shown.removeLast() }
            position = control.range.upperBound
            let after = text[position...].drop { $0.isWhitespace }
            if !shown.isEmpty && !after.isEmpty { shown += " " }
            position = after.startIndex
        }
        shown += text[position...]
        return shown.trimmingCharacters(in: .whitespacesAndNewlines)
    }
}
