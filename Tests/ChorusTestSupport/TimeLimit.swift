import Foundation

/// The body did not finish within its time limit.
public struct TimeLimitExceeded: Error, CustomStringConvertible {
    public var description: String
}

/// Runs `body`, but returns (throwing `TimeLimitExceeded`) after `seconds` even if it has not finished, so that a test
/// that hangs fails and names itself instead of stopping the whole run (Swift Testing's own time limit waits for the
/// body). A body still running then is cancelled and left to end on its own.
public func withinTimeLimit<T: Sendable>(_ seconds: Double, _ what: String, _ body: @escaping @Sendable () async throws -> T) async throws -> T {
    return try await withCheckedThrowingContinuation { continuation in
        let once = ResumeOnce(continuation)
        let work = Task {
            do { once.resume(.success(try await body())) } catch { once.resume(.failure(error)) }
        }
        Task {
            try? await Task.sleep(nanoseconds: UInt64(seconds * 1e9))
            once.resume(.failure(TimeLimitExceeded(description: "\(what) did not finish within \(Int(seconds)) s")))
            work.cancel()
        }
    }
}

/// Resumes a continuation with the first result it is given.
private final class ResumeOnce<T: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var continuation: CheckedContinuation<T, any Error>?
    init(_ continuation: CheckedContinuation<T, any Error>) { self.continuation = continuation }
    func resume(_ result: Result<T, any Error>) {
        lock.lock()
        let pending = continuation
        continuation = nil
        lock.unlock()
        pending?.resume(with: result)
    }
}
