import ChorusSupport
import ChorusWire
import Foundation

/// A token bucket per caller: `perMinute` requests a minute, refilled continuously, bursts up to a
/// minute's worth. Buckets untouched for ten minutes are forgotten, so memory follows active callers.
/// A lock rather than an actor: every request takes a token, and taking one should not cost a task switch
/// (nor be impossible from a channel handler on an event loop).
final class RateLimiter: Sendable {
    /// One caller's bucket: tokens left at `updated` (seconds since 1970).
    struct Bucket: Sendable, Equatable {
        var tokens: Double
        var updated: Double
    }

    let perMinute: Int
    private struct State {
        var buckets: [String: Bucket] = [:]
        var lastSweep = 0.0

        /// Forgets the buckets untouched for ten minutes, at most once a minute.
        mutating func sweep(now: Double) {
            guard now - lastSweep > 60 else { return }
            lastSweep = now
            buckets = buckets.filter { now - $0.value.updated < 600 }
        }
    }
    private let state = Locked(State())

    init(perMinute: Int) { self.perMinute = perMinute }

    private var capacity: Double { Double(perMinute) }
    private var rate: Double { Double(perMinute) / 60 }

    /// Takes a token for `caller`; returns `nil` when allowed, else seconds until one is available.
    func take(for caller: String, now: Double = Date().timeIntervalSince1970) -> Int? {
        guard perMinute > 0 else { return nil }
        return state.withLock { state in
            var bucket = refilled(state.buckets[caller], now: now)
            defer {
                state.buckets[caller] = bucket
                state.sweep(now: now)
            }
            if bucket.tokens >= 1 {
                bucket.tokens -= 1
                return nil
            }
            return Int(((1 - bucket.tokens) / rate).rounded(.up))
        }
    }

    /// The buckets not yet full again at `now`, as they were last changed (what a restart must not refill).
    func counting(now: Double = Date().timeIntervalSince1970) -> [String: Bucket] {
        guard perMinute > 0 else { return [:] }
        return state.withLock { $0.buckets.filter { refilled($0.value, now: now).tokens < capacity } }
    }

    /// Takes over buckets kept from before a restart (`counting()` of the earlier process); a bucket changed here since
    /// stays as it is. A bucket dated in the future (the clock was set back) counts from `now`.
    func restore(_ saved: [String: Bucket], now: Double = Date().timeIntervalSince1970) {
        guard perMinute > 0 else { return }
        state.withLock { state in
            for (caller, bucket) in saved where state.buckets[caller] == nil && bucket.tokens.isFinite && bucket.updated.isFinite {
                state.buckets[caller] = Bucket(tokens: max(0, min(capacity, bucket.tokens)), updated: min(now, bucket.updated))
            }
        }
    }

    /// `bucket` (a full one when there is none) refilled up to `now`.
    private func refilled(_ bucket: Bucket?, now: Double) -> Bucket {
        guard let bucket else { return Bucket(tokens: capacity, updated: now) }
        return Bucket(tokens: min(capacity, bucket.tokens + max(0, now - bucket.updated) * rate), updated: now)
    }
}
