import Foundation

/// How a failed call is tried again: exponential backoff with jitter (or the wait the server asked for with
/// `Retry-After`), within a bounded number of attempts and a bounded total time. The one retry rule of Chorus:
/// voice providers, the S3 client, and the service's own calls to its database use it with their own numbers.
///
/// ```swift
/// let policy = RetryPolicy.providers
/// let speech = try await policy.run({ _ in try await provider.synthesize(request) },
///                                   classify: { ($0 as? VoiceError)?.isRetryable == true ? .retry(after: nil) : .fail })
/// ```
public struct RetryPolicy: Sendable {
    /// Attempts in all, including the first.
    public var maxAttempts: Int
    /// Delay before the first retry, seconds; multiplied by `multiplier` for each later one.
    public var initialDelay: Double
    /// How much longer each wait is than the one before.
    public var multiplier: Double
    /// Longest computed delay, seconds.
    public var maxDelay: Double
    /// Each computed delay is scaled by a random factor within ±`jitter` (0.25: 75 % to 125 %); 0 for exact waits.
    public var jitter: Double
    /// Longest `Retry-After` honoured, seconds; a server asking for more fails the call instead.
    public var maxRetryAfter: Double
    /// Give up when the next wait would pass this many seconds since the first attempt.
    public var maxTotal: Double

    public init(
        maxAttempts: Int = 5, initialDelay: Double = 0.5, multiplier: Double = 2, maxDelay: Double = 20, jitter: Double = 0.25,
        maxRetryAfter: Double = 60, maxTotal: Double = 180
    ) {
        self.maxAttempts = maxAttempts
        self.initialDelay = initialDelay
        self.multiplier = multiplier
        self.maxDelay = maxDelay
        self.jitter = jitter
        self.maxRetryAfter = maxRetryAfter
        self.maxTotal = maxTotal
    }

    /// One attempt, never retried (a call that is not safe to repeat).
    public static let once = RetryPolicy(maxAttempts: 1)

    /// What a failed attempt allows.
    public enum Verdict: Sendable, Equatable {
        /// Final: the error is thrown.
        case fail
        /// Worth another attempt; `after` is the wait the server asked for (`Retry-After`), else the backoff decides.
        case retry(after: Double?)
    }

    /// Seconds to wait before attempt `attempt + 1`, or `nil` to give up.
    /// - Parameters:
    ///   - verdict: what the failure of attempt `attempt` allows.
    ///   - attempt: the attempt that failed, from 1.
    ///   - elapsed: seconds since the first attempt started.
    public func delay(after verdict: Verdict, attempt: Int, elapsed: Double) -> Double? {
        guard case .retry(let retryAfter) = verdict, attempt < maxAttempts else { return nil }
        var wait: Double
        if let retryAfter {
            guard retryAfter <= maxRetryAfter else { return nil }
            wait = max(0, retryAfter)
        } else {
            wait = min(maxDelay, initialDelay * pow(multiplier, Double(attempt - 1)))
            if jitter > 0 { wait *= Double.random(in: (1 - jitter)...(1 + jitter)) }
        }
        guard elapsed + wait <= maxTotal else { return nil }
        return wait
    }

    /// Runs `body` (given the attempt number, from 1), trying again as `classify` and the numbers above allow.
    /// - Parameters:
    ///   - classify: what an error allows; `.fail` throws it at once.
    ///   - wait: how a pause is spent (`Task.sleep` unless the caller can be woken early).
    ///   - onRetry: hears of each retry (the error, the attempt that failed, the wait) before the pause.
    /// - Throws: the last error when no attempt is left, or `CancellationError` from the pause.
    ///   - isolation: the caller's actor, on which `body` and the closures run (so they may use its state).
    public func run<T>(
        isolation: isolated (any Actor)? = #isolation, _ body: (Int) async throws -> T, classify: (any Error) -> Verdict,
        wait: (Double) async throws -> Void = RetryPolicy.sleep,
        onRetry: (any Error, Int, Double) -> Void = { _, _, _ in }
    ) async throws -> T {
        let started = Date()
        var attempt = 1
        while true {
            do {
                return try await body(attempt)
            } catch {
                guard let pause = delay(after: classify(error), attempt: attempt, elapsed: Date().timeIntervalSince(started)) else { throw error }
                onRetry(error, attempt, pause)
                try await wait(pause)
                attempt += 1
            }
        }
    }

    /// `Task.sleep` for `seconds`.
    @Sendable public static func sleep(_ seconds: Double) async throws {
        try await Task.sleep(nanoseconds: UInt64(max(0, seconds) * 1e9))
    }
}
