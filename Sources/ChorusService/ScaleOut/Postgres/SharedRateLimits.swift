import ChorusSupport
import ChorusWire
import Foundation
import PostgresNIO

/// The per-key request limit (`--rate-limit`) counted in the database, so it holds across instances: one token bucket
/// per caller in `chorus_rate_limits` (a minute's worth of requests, refilled continuously), taken in one statement
/// that the row's lock serializes — the same rule as `RateLimiter`, which counts per instance without a database.
struct SharedRateLimits: Sendable {
    let database: PostgresDatabase
    let perMinute: Int
    /// When taking a token last failed: for a few seconds after, requests are not counted (no wait on a database that
    /// is not answering; the caller lets them through uncounted anyway).
    private let lastFailure = FailureClock()

    init(database: PostgresDatabase, perMinute: Int) {
        self.database = database
        self.perMinute = perMinute
    }

    /// Takes a token for `caller`; `nil` when allowed, else seconds until one is available.
    /// - Throws: `DatabaseError` (at once for 5 s after a failure; the operation's deadline is 3 s).
    func take(for caller: String) async throws -> Int? {
        if lastFailure.recent(within: 5) {
            throw DatabaseError(kind: .unavailable, operation: "take a request token", reason: "the database failed moments ago")
        }
        do {
            return try await takeNow(for: caller)
        } catch {
            lastFailure.mark()
            throw error
        }
    }

    private func takeNow(for caller: String) async throws -> Int? {
        let capacity = Double(perMinute)
        let rate = Double(perMinute) / 60
        return try await database.run("take a request token", deadline: 3) { client in
            // A row comes back only when a token was taken (or the bucket was made); a refusal changes nothing.
            let taken = try await client.query(
                """
                INSERT INTO chorus_rate_limits AS bucket (caller, tokens, updated_at) VALUES (\(caller), \(capacity) - 1, clock_timestamp())
                ON CONFLICT (caller) DO UPDATE
                    SET tokens = least(\(capacity), bucket.tokens + extract(epoch FROM clock_timestamp() - bucket.updated_at)::float8 * \(rate)) - 1,
                        updated_at = clock_timestamp()
                    WHERE least(\(capacity), bucket.tokens + extract(epoch FROM clock_timestamp() - bucket.updated_at)::float8 * \(rate)) >= 1
                RETURNING tokens
                """, logger: database.logger
            ).collect()
            guard taken.isEmpty else { return nil }
            var wait = 1
            for try await tokens in try await client.query(
                """
                SELECT least(\(capacity), tokens + extract(epoch FROM clock_timestamp() - updated_at)::float8 * \(rate))
                FROM chorus_rate_limits WHERE caller = \(caller)
                """, logger: database.logger
            ).decode(Double.self) {
                wait = max(1, Int(((1 - tokens) / rate).rounded(.up)))
            }
            return wait
        }
    }

    /// Forgets buckets untouched for ten minutes (full again by then).
    func sweep() async throws {
        _ = try await database.run("sweep request tokens") { client in
            try await client.query(
                "DELETE FROM chorus_rate_limits WHERE updated_at < clock_timestamp() - interval '10 minutes'",
                logger: database.logger
            ).collect()
        }
    }
}

/// When something last failed.
final class FailureClock: Sendable {
    private let last = Locked<Date?>(nil)

    func mark() { last.withLock { $0 = Date() } }

    func recent(within seconds: Double) -> Bool { last.withLock { $0.map { Date().timeIntervalSince($0) < seconds } ?? false } }
}
