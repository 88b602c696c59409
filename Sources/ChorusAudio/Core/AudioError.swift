/// The one error type of the audio engine: what failed (`subject`: a file, a message, an option),
/// why (`reason`), and the library's own words when a C library reported it (`underlying`).
///
/// ```swift
/// do { _ = try AudioFileReader(url: url) }
/// catch let error as AudioError { print(error) }   // "clip.mp3: not a recognised audio file (Invalid data found when processing input)"
/// ```
public struct AudioError: Error, CustomStringConvertible, Sendable, Equatable {
    /// What kind of failure this is, for programs that branch on it.
    public enum Code: String, Sendable {
        case fileNotFound
        case unreadable
        case unsupportedFormat
        case corrupt
        case truncated
        case emptyAudio
        case invalidArgument
        case invalidConversation
        case encodingFailed
        case writeFailed
    }

    public var code: Code
    /// The thing that failed: a file path, `messages[3]`, an option name.
    public var subject: String
    /// A human sentence fragment saying why.
    public var reason: String
    /// The C library's message, when one was involved.
    public var underlying: String?

    public init(_ code: Code, subject: String, reason: String, underlying: String? = nil) {
        self.code = code
        self.subject = subject
        self.reason = reason
        self.underlying = underlying
    }

    public var description: String {
        var text = subject.isEmpty ? reason : "\(subject): \(reason)"
        if let underlying, !underlying.isEmpty { text += " (\(underlying))" }
        return text
    }

    /// The same error, said about a different subject (e.g. a message index instead of a path).
    func about(_ newSubject: String) -> AudioError {
        var copy = self
        copy.reason = subject.isEmpty ? reason : "\(subject): \(reason)"
        copy.subject = newSubject
        return copy
    }
}
