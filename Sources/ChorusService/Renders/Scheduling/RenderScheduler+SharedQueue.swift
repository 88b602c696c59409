import ChorusOutbound
import ChorusWire
import Foundation
import Logging

/// The shared queue's half of the scheduler (`--database`): a render is queued in the database (once, however many
/// instances are sent it), run here at once when a worker is free, else claimed by the first instance with one
/// (`claimNext`, woken by the database's notifications), its lease renewed while it runs and its end recorded there;
/// a render this instance stops before it finishes goes back to the queue for another. The local half, and the state
/// both share, is in `RenderScheduler.swift`.
extension RenderScheduler {

    /// Whether it still takes renders (false once shutting down).
    var isAccepting: Bool { accepting }

    /// Queues `resolved` in the database (`request` is what runs it on any instance) unless it exists there, and
    /// runs it here at once when a worker is free. Without shared jobs, `submit(_:caller:retention:)`.
    /// - Throws: `ServiceError` 503 / 429 (limits, stopping), `DatabaseError`.
    func submit(
        _ resolved: ResolvedRender, request: RenderRequest, caller: String, retention: Double,
        now: Double = Date().timeIntervalSince1970
    ) async throws -> Submission {
        guard let shared else {
            return .local(try await submit(resolved, request: try JSONEncoder().encode(request), caller: caller, retention: retention, now: now))
        }
        if let existing = active[resolved.id] { return .local(existing) }
        guard accepting else { throw ServiceError.shuttingDown }
        let enqueued = try await shared.queue.enqueue(
            id: resolved.id, caller: caller, request: try JSONEncoder().encode(request),
            format: resolved.format.rawValue, createdAt: now, expiresAt: now + retention,
            perCaller: perCaller, queueLimit: queueLimit)
        if case .existing(let job) = enqueued { return active[job.id].map { .local($0) } ?? .remote(job) }
        if accepting, !reconciling, running.count + claiming < workers {
            claiming += 1
            defer { claiming -= 1 }
            do {
                if let claim = try await shared.queue.claim(id: resolved.id), case .started(let render) = await start(claim, resolved: resolved) {
                    return .local(render)
                }
            } catch {
                lostClaimAt = Date()  // the claim may have been made without this instance hearing of it
            }
        }
        if let render = active[resolved.id] { return .local(render) }
        return .remote(
            SharedQueue.Entry(
                id: resolved.id, status: .queued, caller: caller, createdAt: now, expiresAt: now + retention, attempts: 0,
                format: resolved.format.rawValue))
    }

    /// Claims the oldest claimable shared job and starts it, when a worker is free; returns whether to claim again.
    /// - Throws: `DatabaseError`.
    func claimNext() async throws -> Bool {
        guard let shared, accepting, !reconciling, running.count + claiming < workers else { return false }
        if lostClaimAt != nil && claiming == 0 {
            reconciling = true
            defer { reconciling = false }
            try await shared.queue.releaseUnknown(running: Array(running.keys))
            if let lost = lostClaimAt, Date().timeIntervalSince(lost) > shared.queue.lease { lostClaimAt = nil }
        }
        claiming += 1
        defer { claiming -= 1 }
        let claim: SharedQueue.Claim?
        do {
            claim = try await shared.queue.claim()
        } catch {
            lostClaimAt = Date()
            throw error
        }
        guard let claim else { return false }
        switch await start(claim, resolved: nil) {
        case .started, .failed: return true
        case .skipped: return false
        }
    }

    /// What became of a claimed job here.
    private enum Start {
        case started(ActiveRender)
        /// Its request could not be resolved here: completed as failed.
        case failed
        /// Not run here (already running here, stopping, or its folder could not be made): given back or kept as it was.
        case skipped
    }

    /// Runs a claimed job here: resolves its request (unless the caller has), then renders it while renewing the lease.
    /// A request that cannot be resolved here (a clip gone, a voice unknown) completes the job as failed.
    private func start(_ claim: SharedQueue.Claim, resolved given: ResolvedRender?) async -> Start {
        guard let shared else { return .skipped }
        let job = claim.job
        // This instance's own job whose lease ran out while it still runs it (renewals failing): the claim renewed
        // the lease; the run under way completes it.
        if active[job.id] != nil { return .skipped }
        guard accepting else {
            _ = try? await shared.queue.release(job.id)
            return .skipped
        }
        shared.logger.info(
            "render claimed",
            metadata: [
                "render": .string(job.id), "attempt": .stringConvertible(job.attempts),
                "waited_ms": .stringConvertible(Int(claim.waited * 1000)),
            ])
        executor.claimed(waited: claim.waited)
        var resolved: ResolvedRender
        do {
            if let given {
                resolved = given
            } else {
                resolved = try await shared.resolve(try JSONDecoder().decode(RenderRequest.self, from: claim.request))
            }
        } catch {
            let failure = ServiceError(error, during: .render)
            let record = StoredRender.failure(
                id: job.id, format: job.format, createdAt: job.createdAt, expiresAt: job.expiresAt, error: failure.body.error)
            _ = try? await shared.queue.complete(job.id, record: record)
            return .failed
        }
        guard active[job.id] == nil, accepting else {  // checked again: resolving awaited
            if !accepting { _ = try? await shared.queue.release(job.id) }
            return .skipped
        }
        resolved.id = job.id
        let render = ActiveRender(resolved: resolved, caller: job.caller, createdAt: job.createdAt, expiresAt: job.expiresAt)
        active[render.id] = render  // before awaiting: a second claim of it here meanwhile is skipped
        do {
            try await replaceEarlier(job.id, now: Date().timeIntervalSince1970, createdAt: job.createdAt)
            try await executor.accept(render, request: nil)
            guard accepting else { throw ServiceError.shuttingDown }
        } catch {
            active.removeValue(forKey: render.id)
            // Given back to the queue: whoever joined it here waits for the instance that runs it.
            render.markStopped()
            render.finish(.failure(ServiceError(error, during: .render)))
            _ = try? await shared.queue.release(job.id)
            return .skipped
        }
        active[render.id] = render
        let executor = self.executor
        running[render.id] = Task {
            let lease = Task { await self.keepLease(of: render, shared: shared) }
            // Recorded in the database before anyone waiting here hears the result: a client told "done" finds it done
            // on every instance. In a task of its own, so that a shutdown's cancellation cannot cut it short.
            _ = await executor.execute(render) { result in
                lease.cancel()
                await Task { await self.complete(render, result: result, shared: shared) }.value
            }
            self.finished(render)
        }
        return .started(render)
    }

    /// Renews the lease of a running shared job every third of it, and records its progress (at most once a second);
    /// stops the render when the job is no longer this instance's, or when no renewal has succeeded for two thirds of
    /// the lease (counted from when the last successful one was sent), before another instance may claim it.
    private nonisolated func keepLease(of render: ActiveRender, shared: SharedQueueAccess) async {
        let lease = shared.queue.lease
        var renewed = Date()
        var written = Date.distantPast
        var progress: RenderProgressBody?
        while !Task.isCancelled {
            try? await Task.sleep(nanoseconds: UInt64(min(1, lease / 3) * 1e9))
            if Task.isCancelled { return }
            let current = render.manifest().progress
            guard Date().timeIntervalSince(written) >= lease / 3 || current != progress else { continue }
            let sent = Date()
            // No longer than the time left before two thirds of the lease: the decision to stop is never late.
            let left = max(0.2, lease * 2 / 3 - sent.timeIntervalSince(renewed))
            do {
                if try await shared.queue.renew(render.id, progress: current, deadline: min(shared.queue.deadline, left)) {
                    renewed = sent
                    written = sent
                    progress = current
                } else {
                    if Task.isCancelled { return }
                    await abandon(render.id, reason: "another instance took it over")
                    return
                }
            } catch {
                guard !Task.isCancelled, Date().timeIntervalSince(renewed) > lease * 2 / 3 else { continue }
                await abandon(render.id, reason: "the database could not be reached for two thirds of the lease")
                return
            }
        }
    }

    private func abandon(_ id: String, reason: String) {
        guard let task = running[id] else { return }
        abandoned.insert(id)
        active[id]?.markStopped()
        shared?.logger.warning("render stopped here", metadata: ["render": .string(id), "reason": .string(reason)])
        task.cancel()
    }

    /// Records a shared job's end in the database, retried while the database is unreachable for up to a lease
    /// (`completionRetry`; if it stays so, the lease runs out and the job is run again by whichever instance claims it). A finished render is
    /// always offered (only the lease holder's completion counts); a failure is not recorded when this instance gave
    /// the job up (taken over, or given back at shutdown: the cancellation is not the render's failure).
    private func complete(_ render: ActiveRender, result: Result<StoredRender, ServiceError>, shared: SharedQueueAccess) async {
        let record: StoredRender
        switch result {
        case .success(let stored):
            record = stored
        case .failure(let failure):
            guard !abandoned.contains(render.id) else { return }
            record = StoredRender.failure(
                id: render.id, format: render.resolved.format.rawValue, createdAt: render.createdAt,
                expiresAt: render.expiresAt, error: failure.body.error)
        }
        let started = Date()
        do {
            try await Self.completionRetry.run(
                { _ in
                    // Each attempt 2 s at most: one under way when the shutdown comes overruns it by no more.
                    let left = max(0.2, self.completionLimit(started: started, lease: shared.queue.lease).timeIntervalSinceNow)
                    if try await !shared.queue.complete(render.id, record: record, deadline: min(2, left)) {
                        shared.logger.warning("render finished after another instance took it over", metadata: ["render": .string(render.id)])
                    }
                }, classify: { _ in Date() < self.completionLimit(started: started, lease: shared.queue.lease) ? .retry(after: nil) : .fail })
        } catch {
            shared.logger.error("render not recorded in the database", metadata: ["render": .string(render.id), "error": .string("\(error)")])
        }
    }

    /// A shared job's end is recorded again every half second while the database is unreachable (`completionLimit`).
    static let completionRetry = RetryPolicy(maxAttempts: .max, initialDelay: 0.5, multiplier: 1, maxDelay: 0.5, jitter: 0, maxTotal: .infinity)

    /// Until when a completion begun at `started` is tried: for a lease; once stopping, a second more at most (the
    /// shutdown's timeout holds; an unrecorded job's lease runs out and another instance runs it again).
    private func completionLimit(started: Date, lease: Double) -> Date {
        let deadline = started.addingTimeInterval(lease)
        return stoppedAt.map { min(deadline, $0.addingTimeInterval(1)) } ?? deadline
    }
}
