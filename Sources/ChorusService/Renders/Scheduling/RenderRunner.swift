import ChorusWire
import Foundation

/// What the scheduler asks of whoever runs renders: `RenderExecutor` in the service, a recording double in the
/// scheduler's tests.
protocol RenderRunner: Sendable {
    /// Records that `active` was accepted, before its client hears so: its folder, and (without a shared queue) its
    /// `request`, so that a restart runs it again.
    func accept(_ active: ActiveRender, request: Data?) async throws
    /// Forgets an acceptance `accept` recorded (the render was refused after all).
    func forgetAccepted(_ id: String) async throws
    /// Removes an earlier record of render `id` before it is made again: a failed one, a done one that has expired but
    /// is not yet swept, or (with a shared queue) a copy made at another time than `createdAt`.
    func replaceEarlier(_ id: String, now: Double, createdAt: Double?) async throws
    /// Runs `active` to its end and answers everyone waiting; `record` runs with the result before they hear it.
    /// Returns the stored render when it is done.
    func execute(_ active: ActiveRender, record: @Sendable (Result<StoredRender, ServiceError>) async -> Void) async -> StoredRender?
    /// Renders waiting for a worker, for the metrics.
    func queued(depth: Int)
    /// A shared queue entry claimed after waiting `waited` seconds, for the metrics.
    func claimed(waited: Double)
}

extension RenderRunner {
    func execute(_ active: ActiveRender) async -> StoredRender? { await execute(active, record: { _ in }) }
}

/// What the scheduler asks of the queue several instances share: `SharedQueue` (PostgreSQL) in the service, an
/// in-memory queue in the scheduler's tests.
protocol SharedQueueing: Sendable {
    /// Seconds a claim lasts unless renewed.
    var lease: Double { get }
    /// Seconds an operation may take.
    var deadline: Double { get }
    func enqueue(
        id: String, caller: String, request: Data, format: String, createdAt: Double, expiresAt: Double, perCaller: Int,
        queueLimit: Int
    ) async throws -> SharedQueue.Enqueued
    /// Claims entry `id` (queued, or its lease run out), or the oldest claimable one; `nil` when there is none.
    func claim(id: String?) async throws -> SharedQueue.Claim?
    /// Renews this instance's lease of `id`, recording its progress; `false` when the entry is no longer this instance's.
    func renew(_ id: String, progress: RenderProgressBody?, deadline: Double?) async throws -> Bool
    /// Records the end of `id` (done or failed); `false` when this instance no longer held it.
    func complete(_ id: String, record: StoredRender, deadline: Double?) async throws -> Bool
    /// Gives `id` back to the queue (only if this instance still holds it as running).
    func release(_ id: String, deadline: Double?) async throws
    /// Gives back every entry this instance holds as running but does not run (`running`).
    func releaseUnknown(running: [String]) async throws
}

extension SharedQueueing {
    func claim() async throws -> SharedQueue.Claim? { try await claim(id: nil) }
    func complete(_ id: String, record: StoredRender) async throws -> Bool { try await complete(id, record: record, deadline: nil) }
    func release(_ id: String) async throws { try await release(id, deadline: nil) }
}
