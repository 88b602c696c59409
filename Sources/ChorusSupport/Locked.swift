import Foundation

/// A value shared between threads, read and changed under an `NSLock`: the package's one way to guard shared state
/// (several values guarded together go in one struct or tuple, changed in one `withLock`). (Not
/// `Synchronization.Mutex`: on Linux it waits on futexes directly, which ThreadSanitizer does not see, so every access
/// under it is reported as a race.)
package final class Locked<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var guarded: Value

    package init(_ value: Value) {
        guarded = value
    }

    /// Runs `body` on the value with the lock held.
    package func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&guarded)
    }

    /// A copy of the value, read under the lock.
    package var value: Value { withLock { $0 } }
}
