/// A refused input, as every layer's own error type for bad input says it: what was refused (`subject`: a field such
/// as `messages[2].text` or `gap_ms`, a file), the value when it matters, and why. The service answers any of them as
/// one field's error, and the command line names the flag a field came from, each in one place.
///
/// ```swift
/// catch let error as any InputError { print(error.subject, error.reason) }   // "lexicon.Nguyen", "the alias must be words to say"
/// ```
public protocol InputError: Error, CustomStringConvertible, Sendable {
    /// The field, file or thing refused.
    var subject: String { get }
    /// The value that was refused, for an out-of-range setting.
    var value: String? { get }
    /// A human sentence fragment saying why.
    var reason: String { get }
}

extension InputError {
    /// The refused input as errors name it: the subject and the value (`gap_ms -5`), either alone when the other is
    /// empty. The one way every layer's error starts its description, and how an error said about another subject
    /// keeps what it was about.
    public var named: String {
        guard let value else { return subject }
        return subject.isEmpty ? value : "\(subject) \(value)"
    }
}
