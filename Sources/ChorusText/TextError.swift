public import ChorusSupport

/// The one error type of the text layer: a text, markup, pronunciation or lexicon refused — which field (`subject`:
/// `messages[2].text`, `lexicon.Nguyen`, a lexicon file) and why, with the character where it went wrong.
///
/// ```swift
/// do { _ = try SpeechControls.parts(of: "Wait [pause:99s] now", field: "text") }
/// catch let error as TextError { print(error) }   // "text: [pause:99s] at character 6: a pause may be at most 60 s"
/// ```
public struct TextError: InputError, Equatable {
    public enum Code: String, Sendable {
        /// Markup, a control, a pronunciation or a lexicon entry that is not well-formed or out of range.
        case invalid
        /// A file (a lexicon) that cannot be read.
        case unreadable
    }

    public var code: Code
    public var subject: String
    public var reason: String
    public var value: String? { nil }

    public init(_ code: Code = .invalid, subject: String, reason: String) {
        self.code = code
        self.subject = subject
        self.reason = reason
    }

    public var description: String { subject.isEmpty ? reason : "\(subject): \(reason)" }
}
