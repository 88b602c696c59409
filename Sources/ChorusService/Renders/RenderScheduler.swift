import ChorusOutbound
import ChorusWire
import Foundation
import Logging

/// Runs renders at most `workers` at a time, keeps at most `queueLimit` waiting (503 beyond), and at
/// most `perCaller` queued or running per key (429 beyond). The same render requested again while it
/// runs is joined, not repeated. On shutdown it stops taking renders and lets the accepted ones finish
/// within the timeout; then the running ones are cancelled, and they and the ones still waiting are left recorded as
/// accepted: the next start runs them again (`resume`). A render is recorded from the moment it is accepted
/// (`RenderExecutor.accept`, before its 202), so none is ever lost, neither at a shutdown nor at a crash.
///
/// With shared jobs (`--database`), the queue is the database's: a render is queued there (once, however many
/// instances are sent it), run at once here when a worker is free, else claimed by the first instance with one
/// (`claimNext`, woken by the database's notifications); the limits per key and of the queue are counted there, and
/// a render this instance stops before it finishes goes back to the queue for another.
actor RenderScheduler {
    private let workers: Int
    private let queueLimit: Int
    private let perCaller: Int
    private let executor: RenderExecutor
    private var active: [String: ActiveRender] = [:]
    private var waiting: [ActiveRender] = []
    private var running: [String: Task<Void, Never>] = [:]
    private var perCallerCount: [String: Int] = [:]
    private var accepting = true
    private let shared: SharedQueueAccess?
    /// Shared jobs being claimed (a worker is kept for each until it runs or the claim comes back empty).
    private var claiming = 0
    /// When the shutdown stopped waiting for renders (records still being retried then get a second more).
    private var stoppedAt: Date?
    /// Shared jobs this instance stopped running without completing them (taken over, or given back at shutdown).
    private var abandoned: Set<String> = []

    /// What running shared jobs takes: the queue, its notifications, and how a queued request becomes a render.
    struct SharedQueueAccess: Sendable {
        let queue: SharedQueue
        let watcher: QueueWatcher
        let resolve: @Sendable (RenderRequest) async throws -> ResolvedRender
        let logger: Logger
    }

    /// How a submitted render goes on.
    enum Submission: Sendable {
        /// Running or queued here.
        case local(ActiveRender)
        /// Queued for, or running on, another instance (shared jobs only).
        case remote(SharedQueue.Entry)
    }

    init(workers: Int, queueLimit: Int, perCaller: Int, executor: RenderExecutor, shared: SharedQueueAccess? = nil) {
        self.workers = workers
        self.queueLimit = queueLimit
        self.perCaller = perCaller
        self.executor = executor
        self.shared = shared
    }

    /// The queued or running render `id`, if any.
    func find(_ id: String) -> ActiveRender? { active[id] }

    /// Renders waiting and running.
    var depth: (waiting: Int, running: Int) { (waiting.count, running.count) }

    /// Starts `resolved` (or joins it if it is already under way), recorded first with its `request` (so that a restart
    /// runs it again).
    /// - Throws: `ServiceError` 503 when the queue is full or the service is stopping, 429 when `caller` has too many,
    ///   507/503/500 when it cannot be recorded.
    func submit(_ resolved: ResolvedRender, request: Data, caller: String, retention: Double, now: Double = Date().timeIntervalSince1970) async throws -> ActiveRender {
        if let existing = active[resolved.id] { return existing }
        guard accepting else { throw ServiceError.shuttingDown }
        if perCallerCount[caller, default: 0] >= perCaller {
            throw ServiceError(.tooManyRequests, "too_many_renders", "this key already has \(perCaller) renders queued or running; try again when one finishes",
                               retryAfter: 5)
        }
        if running.count + waiting.count + reserving >= workers + queueLimit {
            throw ServiceError.overloaded(retryAfter: max(1, waiting.count / max(1, workers)))
        }
        let render = ActiveRender(resolved: resolved, caller: caller, createdAt: now, expiresAt: now + retention)
        // Reserved before awaiting: the same request meanwhile joins it, and the limits count it.
        active[render.id] = render
        perCallerCount[caller, default: 0] += 1
        reserving += 1
        defer { reserving -= 1 }
        var recorded = false
        do {
            try await replaceEarlier(resolved.id, now: now)
            try await executor.accept(render, request: request)
            recorded = true
            guard accepting else { throw ServiceError.shuttingDown }
        } catch {
            // Not accepted: nothing of it stays to run after a restart.
            if recorded { try? await executor.store.forgetAccepted(render.id) }
            let failure = ServiceError(error, during: .render)
            active.removeValue(forKey: render.id)
            releaseCaller(caller)
            render.finish(.failure(failure))
            throw failure
        }
        waiting.append(render)
        executor.metrics.queue(depth: waiting.count)
        startWaiting()
        return render
    }

    /// Queues again a render accepted before a restart (recorded already; the limits do not turn it away).
    func resume(_ resolved: ResolvedRender, caller: String, createdAt: Double, expiresAt: Double) async throws {
        guard active[resolved.id] == nil, accepting else { return }
        let render = ActiveRender(resolved: resolved, caller: caller, createdAt: createdAt, expiresAt: expiresAt)
        active[render.id] = render
        perCallerCount[caller, default: 0] += 1
        do {
            try await executor.accept(render, request: nil)
        } catch {
            active.removeValue(forKey: render.id)
            releaseCaller(caller)
            throw error
        }
        waiting.append(render)
        startWaiting()
    }

    /// Renders reserved in `submit` and still being recorded (counted against the queue limit).
    private var reserving = 0

    /// Removes an earlier record of render `id` — failed, or done and expired but not yet swept — before it is made again,
    /// inside the actor: done in the route, a concurrent identical request could remove the folder of the attempt just
    /// accepted (lost at a crash; found by kill9.py), and left for the sweep, it would remove the new one's folder.
    /// With shared jobs, a local copy of a render made at another time (`createdAt`: deleted and queued again since) goes too.
    private func replaceEarlier(_ id: String, now: Double, createdAt: Double? = nil) async throws {
        guard let earlier = executor.store.get(id, now: 0) else { return }
        let other = createdAt.map { abs($0 - earlier.createdAt) >= 0.001 } ?? false
        if !earlier.isDone || earlier.expiresAt <= now || other { try await executor.store.remove(id) }
    }

    private func releaseCaller(_ caller: String) {
        perCallerCount[caller, default: 1] -= 1
        if perCallerCount[caller] == 0 { perCallerCount.removeValue(forKey: caller) }
    }

    private func startWaiting() {
        while running.count < workers, !waiting.isEmpty {
            let render = waiting.removeFirst()
            let executor = self.executor
            running[render.id] = Task {
                let stored = await executor.execute(render)
                self.finished(render)
                // After the render has left the active set: its waveform base (worker pool, bounded like renders).
                if let stored { await executor.addWaveformBase(to: stored) }
            }
        }
        executor.metrics.queue(depth: waiting.count)
    }

    private func finished(_ render: ActiveRender) {
        running.removeValue(forKey: render.id)
        active.removeValue(forKey: render.id)
        if let shared {
            // Given up while running (renewals failing): if this instance still holds it (its own claim loop may have
            // claimed it again meanwhile, finding it running here), it goes back to the queue. At shutdown, `shutdown`
            // gives jobs back itself.
            if abandoned.remove(render.id) != nil, accepting {
                let id = render.id
                Task { _ = try? await shared.queue.release(id) }
            }
            shared.watcher.claims.wake()   // a worker is free
            return
        }
        releaseCaller(render.caller)
        startWaiting()
    }

    // MARK: shared jobs

    /// Whether it still takes renders (false once shutting down).
    var isAccepting: Bool { accepting }

    /// Queues `resolved` in the database (`request` is what runs it on any instance) unless it exists there, and
    /// runs it here at once when a worker is free. Without shared jobs, `submit(_:caller:retention:)`.
    /// - Throws: `ServiceError` 503 / 429 (limits, stopping), `DatabaseError`.
    func submit(_ resolved: ResolvedRender, request: RenderRequest, caller: String, retention: Double,
                now: Double = Date().timeIntervalSince1970) async throws -> Submission {
        guard let shared else {
            return .local(try await submit(resolved, request: try JSONEncoder().encode(request), caller: caller, retention: retention, now: now))
        }
        if let existing = active[resolved.id] { return .local(existing) }
        guard accepting else { throw ServiceError.shuttingDown }
        let enqueued = try await shared.queue.enqueue(id: resolved.id, caller: caller, request: try JSONEncoder().encode(request),
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
                lostClaims = true   // the claim may have been made without this instance hearing of it
            }
        }
        if let render = active[resolved.id] { return .local(render) }
        return .remote(SharedQueue.Entry(id: resolved.id, status: .queued, caller: caller, createdAt: now, expiresAt: now + retention, attempts: 0,
                                      format: resolved.format.rawValue))
    }

    /// A claim whose answer was lost (an error after the database made it): the next claim first gives back whatever
    /// this instance holds but does not run.
    private var lostClaims = false
    private var reconciling = false

    /// Claims the oldest claimable shared job and starts it, when a worker is free; returns whether to claim again.
    /// - Throws: `DatabaseError`.
    func claimNext() async throws -> Bool {
        guard let shared, accepting, !reconciling, running.count + claiming < workers else { return false }
        if lostClaims && claiming == 0 {
            reconciling = true
            defer { reconciling = false }
            try await shared.queue.releaseUnknown(running: Array(running.keys))
            lostClaims = false
        }
        claiming += 1
        defer { claiming -= 1 }
        let claim: SharedQueue.Claim?
        do {
            claim = try await shared.queue.claim()
        } catch {
            lostClaims = true
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
        shared.logger.info("render claimed", metadata: ["render": .string(job.id), "attempt": .stringConvertible(job.attempts),
                                                        "waited_ms": .stringConvertible(Int(claim.waited * 1000))])
        executor.metrics.claimed(waited: claim.waited)
        var resolved: ResolvedRender
        do {
            if let given {
                resolved = given
            } else {
                resolved = try await shared.resolve(try JSONDecoder().decode(RenderRequest.self, from: claim.request))
            }
        } catch {
            let failure = ServiceError(error, during: .render)
            let record = StoredRender.failure(id: job.id, format: job.format, createdAt: job.createdAt, expiresAt: job.expiresAt, error: failure.body.error)
            _ = try? await shared.queue.complete(job.id, record: record)
            return .failed
        }
        guard active[job.id] == nil, accepting else {   // checked again: resolving awaited
            if !accepting { _ = try? await shared.queue.release(job.id) }
            return .skipped
        }
        resolved.id = job.id
        let render = ActiveRender(resolved: resolved, caller: job.caller, createdAt: job.createdAt, expiresAt: job.expiresAt)
        active[render.id] = render   // before awaiting: a second claim of it here meanwhile is skipped
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
            let stored = await executor.execute(render) { result in
                lease.cancel()
                await Task { await self.complete(render, result: result, shared: shared) }.value
            }
            self.finished(render)
            if let stored { await executor.addWaveformBase(to: stored) }
        }
        return .started(render)
    }

    /// Renews the lease of a running shared job every third of it, and records its progress (at most once a second);
    /// stops the render when the job is no longer this instance's, or when no renewal has succeeded for two thirds of
    /// the lease (counted from when the last successful one was sent), before another instance may claim it.
    private nonisolated func keepLease(of render: ActiveRender, shared: SharedQueueAccess) async {
        let lease = shared.queue.lease
        var renewed = Date(), written = Date.distantPast
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
                if try await shared.queue.renew(render.id, progress: current, deadline: min(shared.queue.database.deadline, left)) {
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
            record = StoredRender.failure(id: render.id, format: render.resolved.format.rawValue, createdAt: render.createdAt,
                                          expiresAt: render.expiresAt, error: failure.body.error)
        }
        let started = Date()
        do {
            try await Self.completionRetry.run({ _ in
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

    /// Stops taking renders; waits up to `timeout` seconds for accepted ones, then cancels what is left.
    func shutdown(timeout: Double) async {
        accepting = false
        let deadline = Date().addingTimeInterval(timeout)
        while !active.isEmpty && Date() < deadline {
            try? await Task.sleep(nanoseconds: 50_000_000)
        }
        stoppedAt = Date()
        for render in waiting {
            active.removeValue(forKey: render.id)
            render.markStopped()
            // Not failed: recorded still (here, or in the shared queue, which another instance serves), it runs again.
            render.finish(.failure(ServiceError(.serviceUnavailable, "shutting_down",
                                                "the service stopped before this render started; it runs when the service is back",
                                                retryAfter: 5)))
        }
        waiting.removeAll()
        // Shared jobs still running go back to the queue: another instance takes them over. (`release` changes only a
        // job this instance still holds as running: one recorded done meanwhile stays done.)
        let unfinished = Array(running.keys)
        if shared != nil { abandoned.formUnion(unfinished) }
        for id in unfinished { active[id]?.markStopped() }   // not failed: they run again after the restart (or elsewhere)
        for task in running.values { task.cancel() }
        for task in running.values { await task.value }
        if let shared {
            // At once and briefly: with the database gone the leases run out and other instances take the jobs anyway.
            await withTaskGroup(of: Void.self) { group in
                for id in unfinished { group.addTask { _ = try? await shared.queue.release(id, deadline: 1) } }
            }
        }
    }
}
