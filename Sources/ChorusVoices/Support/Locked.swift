import Foundation

/// A value shared between threads, read and changed under an `NSLock`. (Not `Synchronization.Mutex`: on Linux it waits
/// on futexes directly, which ThreadSanitizer does not see, so every access under it is reported as a race.)
final class Locked<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value

    init(_ value: Value) {
        self.value = value
    }

    func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}
