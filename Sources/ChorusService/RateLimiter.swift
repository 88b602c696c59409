import Foundation

/// A token bucket per caller: `perMinute` requests a minute, refilled continuously, bursts up to a
/// minute's worth. Buckets untouched for ten minutes are forgotten, so memory follows active callers.
/// A lock rather than an actor: every request takes a token, and taking one should not cost a task switch
/// (nor be impossible from a channel handler on an event loop).
final class RateLimiter: @unchecked Sendable {
    let perMinute: Int
    private let lock = NSLock()
    private var buckets: [String: (tokens: Double, updated: Double)] = [:]
    private var lastSweep = 0.0

    init(perMinute: Int) { self.perMinute = perMinute }

    /// Takes a token for `caller`; returns `nil` when allowed, else seconds until one is available.
    func take(for caller: String, now: Double = Date().timeIntervalSince1970) -> Int? {
        guard perMinute > 0 else { return nil }
        lock.lock()
        defer { lock.unlock() }
        let capacity = Double(perMinute)
        let rate = capacity / 60
        var bucket = buckets[caller] ?? (capacity, now)
        bucket.tokens = min(capacity, bucket.tokens + (now - bucket.updated) * rate)
        bucket.updated = now
        defer {
            buckets[caller] = bucket
            sweep(now: now)
        }
        if bucket.tokens >= 1 {
            bucket.tokens -= 1
            return nil
        }
        return Int(((1 - bucket.tokens) / rate).rounded(.up))
    }

    private func sweep(now: Double) {
        guard now - lastSweep > 60 else { return }
        lastSweep = now
        buckets = buckets.filter { now - $0.value.updated < 600 }
    }
}
