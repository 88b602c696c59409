import ChorusOutbound
import Foundation
import Testing

/// ChorusOutbound's retry rule (the S3 client's, the providers' and the service's database calls'): its waits and
/// where it gives up. Its tests live beside the S3 client's, the other half of ChorusOutbound.
@Suite("Retry policy")
struct RetryPolicyTests {
    static let exact = RetryPolicy(maxAttempts: 4, initialDelay: 0.5, multiplier: 2, maxDelay: 1.5, jitter: 0, maxRetryAfter: 10, maxTotal: 20)

    @Test("backoff doubles up to its longest wait; no attempt past the last; a failure that is not retryable ends at once")
    func backoff() {
        let policy = Self.exact
        #expect(policy.delay(after: .retry(after: nil), attempt: 1, elapsed: 0) == 0.5)
        #expect(policy.delay(after: .retry(after: nil), attempt: 2, elapsed: 0) == 1.0)
        #expect(policy.delay(after: .retry(after: nil), attempt: 3, elapsed: 0) == 1.5)
        #expect(policy.delay(after: .retry(after: nil), attempt: 4, elapsed: 0) == nil)
        #expect(policy.delay(after: .fail, attempt: 1, elapsed: 0) == nil)
        #expect(RetryPolicy.once.delay(after: .retry(after: nil), attempt: 1, elapsed: 0) == nil)
        var jittered = policy
        jittered.jitter = 0.25
        for _ in 0..<100 {
            let wait = jittered.delay(after: .retry(after: nil), attempt: 2, elapsed: 0) ?? -1
            #expect((0.75...1.25).contains(wait), "\(wait)")
        }
    }

    @Test("Retry-After is waited exactly, up to its longest; a wait that would pass the total budget gives up")
    func budget() {
        let policy = Self.exact
        #expect(policy.delay(after: .retry(after: 7), attempt: 1, elapsed: 0) == 7)
        #expect(policy.delay(after: .retry(after: 11), attempt: 1, elapsed: 0) == nil)
        #expect(policy.delay(after: .retry(after: 5), attempt: 1, elapsed: 15) == 5)
        #expect(policy.delay(after: .retry(after: 5), attempt: 1, elapsed: 15.1) == nil)
        #expect(policy.delay(after: .retry(after: nil), attempt: 1, elapsed: 19.6) == nil)
    }

    @Test("run: tries again as classified, hears of each retry, and throws the last error when none is left")
    func run() async throws {
        let policy = Self.exact
        var waits: [Double] = []
        var heard: [Int] = []
        let value = try await policy.run(
            { attempt in
                if attempt < 3 { throw URLError(.timedOut) }
                return attempt
            }, classify: { _ in .retry(after: nil) }, wait: { waits.append($0) }, onRetry: { _, attempt, _ in heard.append(attempt) })
        #expect(value == 3 && waits == [0.5, 1.0] && heard == [1, 2])
        var attempts = 0
        await #expect(throws: URLError.self) {
            try await policy.run(
                { _ -> Int in
                    attempts += 1
                    throw URLError(.timedOut)
                }, classify: { _ in .retry(after: nil) }, wait: { _ in })
        }
        #expect(attempts == 4)
    }
}
