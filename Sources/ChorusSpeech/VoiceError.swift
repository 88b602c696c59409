public import ChorusOutbound

/// A failure reported by, or on the way to, a voice provider.
///
/// The description names the provider and the reason and never contains an API key:
/// provider messages are passed through `Secrets.redact` before they are stored here.
public struct VoiceError: Error, CustomStringConvertible, Sendable, Equatable {
    public enum Kind: String, Sendable {
        /// Missing or rejected credentials.
        case authentication
        /// Out of credits or quota for this key.
        case quota
        /// Too many requests (HTTP 429 that is not a quota problem).
        case rateLimited
        /// The request was invalid (text too long, bad settings, unsupported model).
        case badRequest
        /// The voice does not exist for this provider or key.
        case voiceNotFound
        /// A server error (5xx) or the service is overloaded.
        case unavailable
        /// No answer in time.
        case timeout
        /// The connection failed or dropped.
        case network
        /// The answer could not be understood.
        case invalidResponse
        /// Chorus is not set up to use this provider (unknown provider, missing key, wrong base URL).
        case configuration
        /// The account may not use the requested output format (another one can be tried).
        case formatUnavailable
    }

    public var kind: Kind
    public var provider: String
    public var message: String
    /// HTTP status, when there was one.
    public var status: Int?
    /// Seconds the provider asked us to wait (`Retry-After`).
    public var retryAfter: Double?

    public init(_ kind: Kind, provider: String, message: String, status: Int? = nil, retryAfter: Double? = nil) {
        self.kind = kind
        self.provider = provider
        self.message = message
        self.status = status
        self.retryAfter = retryAfter
    }

    /// Worth trying again: rate limits, server errors, timeouts, dropped connections.
    public var isRetryable: Bool {
        switch kind {
        case .rateLimited, .unavailable, .timeout, .network: return true
        default: return false
        }
    }

    /// What the retry policy may do after `error`: a retryable `VoiceError` is tried again (after its
    /// `Retry-After`, if it gave one); anything else is final.
    @Sendable public static func retryVerdict(_ error: any Error) -> RetryPolicy.Verdict {
        guard let error = error as? VoiceError, error.isRetryable else { return .fail }
        return .retry(after: error.retryAfter)
    }

    public var description: String {
        let what: String
        switch kind {
        case .authentication: what = "authentication failed"
        case .quota: what = "quota exhausted"
        case .rateLimited: what = "rate limited"
        case .badRequest: what = "request rejected"
        case .voiceNotFound: what = "voice not found"
        case .unavailable: what = "service unavailable"
        case .timeout: what = "timed out"
        case .network: what = "connection failed"
        case .invalidResponse: what = "unreadable response"
        case .configuration: what = "not configured"
        case .formatUnavailable: what = "output format not available"
        }
        var text = "\(provider): \(what)"
        if !message.isEmpty { text += ": \(message)" }
        if let status { text += " (HTTP \(status))" }
        return text
    }
}
