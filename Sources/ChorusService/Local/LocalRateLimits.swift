import Foundation
import SQLiteNIO

/// Keeps the per-key request limit (`--rate-limit`) of an instance without `--database` across restarts: the buckets of
/// `RateLimiter` not yet full again are written to the `rate_limits` table every few seconds (`RateLimitKeeper`) and
/// when the service stops, and read back at start — so a restart, or a crash (up to those few seconds), does not hand
/// every caller a fresh minute of requests. Not written per request: a disk write for every token would cost more
/// than it keeps.
struct LocalRateLimits: Sendable {
    let database: LocalDatabase
    let limiter: RateLimiter

    /// A bucket untouched this long is full again (the limiter forgets it too), so its row goes.
    static let forgottenAfter = 600.0

    /// Gives the limiter the buckets kept by the previous run; returns how many.
    @discardableResult
    func load(now: Double = Date().timeIntervalSince1970) async throws -> Int {
        guard limiter.perMinute > 0 else { return 0 }
        let rows = try await database.rows(
            "SELECT caller, tokens, updated_at FROM rate_limits WHERE updated_at > ?",
            [.float(now - Self.forgottenAfter)], operation: "read the request limits")
        var saved: [String: RateLimiter.Bucket] = [:]
        for row in rows {
            guard let caller = row.column("caller")?.string, let tokens = row.column("tokens")?.double,
                let updated = row.column("updated_at")?.double
            else { continue }
            saved[caller] = RateLimiter.Bucket(tokens: tokens, updated: updated)
        }
        limiter.restore(saved, now: now)
        return saved.count
    }

    /// Writes the buckets still counting (each statement atomic on its own: a bucket is either its old row or its new one)
    /// and deletes the rows of buckets forgotten.
    func save(now: Double = Date().timeIntervalSince1970) async throws {
        let counting = limiter.counting(now: now).sorted { $0.key < $1.key }
        // SQLite allows 32,766 bound values per statement: 1,000 buckets (3 each) at a time.
        var start = 0
        while start < counting.count {
            let chunk = counting[start..<min(start + 1000, counting.count)]
            let values = Array(repeating: "(?, ?, ?)", count: chunk.count).joined(separator: ", ")
            let binds = chunk.flatMap { [SQLiteData.text($0.key), .float($0.value.tokens), .float($0.value.updated)] }
            try await database.rows(
                """
                INSERT INTO rate_limits (caller, tokens, updated_at) VALUES \(values)
                ON CONFLICT (caller) DO UPDATE SET tokens = excluded.tokens, updated_at = excluded.updated_at
                """, binds, operation: "keep the request limits", background: true)
            start += 1000
        }
        // A bucket full again since its row was written: with the same limit the row refills to full too (takes only
        // lower a bucket, and the row is from before them), so it may stay until it is old enough to be forgotten.
        // With a limit raised in between, such a row restores a bucket stricter than a fresh one for at most a minute:
        // on the safe side.
        try await database.rows(
            "DELETE FROM rate_limits WHERE updated_at <= ?", [.float(now - Self.forgottenAfter)],
            operation: "keep the request limits", background: true)
    }
}
