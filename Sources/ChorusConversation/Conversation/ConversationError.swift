public import ChorusSupport

/// The one error type of the conversation layer: a conversation refused — which field (`subject`: `messages[2].speaker`,
/// `voices.Sarah`, a conversation file) and why. A conversation file's errors name the file, then the field
/// (`chat.json: messages[2].speaker: must not be empty`), whatever layer refused the field (`about(_:)`).
///
/// ```swift
/// do { _ = try Conversation.load(from: URL(fileURLWithPath: "chat.json")) }
/// catch let error as ConversationError { print(error) }
/// ```
public struct ConversationError: InputError, Equatable {
    public enum Code: String, Sendable {
        /// A field missing, malformed or out of range.
        case invalid
        /// A conversation file that does not exist.
        case fileNotFound
        /// A conversation file that exists but cannot be read.
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

    /// `error` (any layer's refusal of an input: a field's `TextError`, an `AudioError` about a setting) said about
    /// `subject` instead: its own subject and value become the start of the reason.
    public init(_ error: any InputError, about subject: String) {
        self.init(subject: subject, reason: error.named.isEmpty ? error.reason : "\(error.named): \(error.reason)")
    }

    public var description: String { subject.isEmpty ? reason : "\(subject): \(reason)" }
}
