public import ChorusSupport

/// The one error type of the audio engine: what failed (`subject`: a file, a message, a field),
/// why (`reason`), the offending `value` when a setting is out of range, and the library's own
/// words when a C library reported it (`underlying`).
///
/// ```swift
/// do { _ = try AudioFileReader(url: url) }
/// catch let error as AudioError { print(error) }   // "clip.mp3: not a recognised audio file (Invalid data found when processing input)"
/// ```
public struct AudioError: InputError, Equatable {
    /// What kind of failure this is, for programs that branch on it.
    public enum Code: String, Sendable {
        case fileNotFound
        case unreadable
        case unsupportedFormat
        case corrupt
        case truncated
        case emptyAudio
        case invalidArgument
        case encodingFailed
        case writeFailed
    }

    public var code: Code
    /// The thing that failed: a file path, `messages[3]`, a setting's field name (`gap_ms`, `loudness`).
    public var subject: String
    /// A human sentence fragment saying why.
    public var reason: String
    /// The value that was refused, for out-of-range settings (`-5` for `gap_ms`).
    public var value: String?
    /// The C library's message, when one was involved.
    public var underlying: String?

    public init(_ code: Code, subject: String, reason: String, value: String? = nil, underlying: String? = nil) {
        self.code = code
        self.subject = subject
        self.reason = reason
        self.value = value
        self.underlying = underlying
    }

    /// An out-of-range setting: `field` is its name in JSON (`gap_ms`), `value` what was given.
    public static func invalid(_ field: String, _ value: some CustomStringConvertible, _ reason: String) -> AudioError {
        AudioError(.invalidArgument, subject: field, reason: reason, value: value.description)
    }

    public var description: String {
        var text = named.isEmpty ? reason : "\(named): \(reason)"
        if let underlying, !underlying.isEmpty { text += " (\(underlying))" }
        return text
    }

    /// The same error, said about a different subject (e.g. a message index instead of a path).
    package func about(_ newSubject: String) -> AudioError {
        var copy = self
        copy.reason = named.isEmpty ? reason : "\(named): \(reason)"
        copy.subject = newSubject
        copy.value = nil
        return copy
    }
}
