public import ChorusSupport

/// Why a voice could not be made: the recording (`subject`: its file) or the name refused, and why. Models that are
/// missing or broken are the `VoiceError` their loaders give (`.configuration`, naming the file).
public struct VoiceMakingError: InputError, Equatable {
    public enum Code: String, Sendable {
        /// A recording that cannot be used: unreadable, too short, silent, more than one voice.
        case recording
        /// The name is not a voice name or is taken.
        case name
        /// Settings out of range: too many files, a budget out of bounds.
        case invalidArgument
    }

    public var code: Code
    public var subject: String
    public var reason: String
    public var value: String?

    public init(_ code: Code, subject: String, reason: String, value: String? = nil) {
        self.code = code
        self.subject = subject
        self.reason = reason
        self.value = value
    }

    public var description: String { named.isEmpty ? reason : "\(named): \(reason)" }
}
