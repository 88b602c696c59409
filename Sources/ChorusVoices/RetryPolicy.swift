import Foundation

/// How provider calls are retried: rate limits (429), server errors (5xx), timeouts and dropped
/// connections get exponential backoff with jitter, honouring `Retry-After`, within a bounded number
/// of attempts and total time. Authentication, quota, validation and voice-not-found errors fail at once.
public struct RetryPolicy: Sendable {
    /// Attempts in all, including the first.
    public var maxAttempts: Int
    /// Delay before the first retry, seconds; doubles each time.
    public var initialDelay: Double
    /// Longest computed delay, seconds.
    public var maxDelay: Double
    /// Longest `Retry-After` honoured, seconds; a provider asking for more fails the call instead.
    public var maxRetryAfter: Double
    /// Give up when the next wait would pass this many seconds since the first attempt.
    public var maxTotal: Double

    public init(maxAttempts: Int = 5, initialDelay: Double = 0.5, maxDelay: Double = 20, maxRetryAfter: Double = 60, maxTotal: Double = 180) {
        self.maxAttempts = maxAttempts
        self.initialDelay = initialDelay
        self.maxDelay = maxDelay
        self.maxRetryAfter = maxRetryAfter
        self.maxTotal = maxTotal
    }

    /// Seconds to wait before attempt `attempt + 1` after `error`, or `nil` to give up.
    func delay(after error: VoiceError, attempt: Int, elapsed: Double) -> Double? {
        guard error.isRetryable, attempt < maxAttempts else { return nil }
        var wait: Double
        if let retryAfter = error.retryAfter {
            guard retryAfter <= maxRetryAfter else { return nil }
            wait = retryAfter
        } else {
            wait = min(maxDelay, initialDelay * pow(2, Double(attempt - 1)))
            wait *= Double.random(in: 0.75...1.25)
        }
        guard elapsed + wait <= maxTotal else { return nil }
        return wait
    }

    /// Runs `body`, retrying as above. `onRetry` hears of each retry before the wait.
    func run<T: Sendable>(_ body: () async throws -> T, onRetry: (VoiceError, Int, Double) -> Void) async throws -> T {
        let started = Date()
        var attempt = 1
        while true {
            do {
                return try await body()
            } catch let error as VoiceError {
                guard let wait = delay(after: error, attempt: attempt, elapsed: Date().timeIntervalSince(started)) else { throw error }
                onRetry(error, attempt, wait)
                try await Task.sleep(nanoseconds: UInt64(wait * 1e9))
                attempt += 1
            }
        }
    }
}
