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
/// With a shared queue (`--database`), the queue is the database's; that half is `RenderScheduler+SharedQueue.swift`.
/// Renders are run by a `RenderRunner` (`RenderExecutor`), and the shared queue is a `SharedQueueing` (`SharedQueue`),
/// so both halves are tested with doubles as well as for real.
actor RenderScheduler {
    let workers: Int
    let queueLimit: Int
    let perCaller: Int
    let executor: any RenderRunner
    var active: [String: ActiveRender] = [:]
    var waiting: [ActiveRender] = []
    var running: [String: Task<Void, Never>] = [:]
    var perCallerCount: [String: Int] = [:]
    var accepting = true
    let shared: SharedQueueAccess?
    /// Shared jobs being claimed (a worker is kept for each until it runs or the claim comes back empty).
    var claiming = 0
    /// When the shutdown stopped waiting for renders (records still being retried then get a second more).
    var stoppedAt: Date?
    /// Shared jobs this instance stopped running without completing them (taken over, or given back at shutdown).
    var abandoned: Set<String> = []
    /// When a claim's answer was last lost (an error, while the database may have made it, or may yet: a query held
    /// up by the network runs when it arrives). Until a lease after it, each claim first gives back whatever this
    /// instance holds but does not run; a claim landing later than that is the lease's to end.
    var lostClaimAt: Date?
    /// Giving back what this instance holds but does not run (claims wait meanwhile).
    var reconciling = false

    /// What running shared jobs takes: the queue, its notifications, and how a queued request becomes a render.
    struct SharedQueueAccess: Sendable {
        let queue: any SharedQueueing
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

    init(workers: Int, queueLimit: Int, perCaller: Int, executor: any RenderRunner, shared: SharedQueueAccess? = nil) {
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
    func submit(_ resolved: ResolvedRender, request: Data, caller: String, retention: Double, now: Double = Date().timeIntervalSince1970) async throws
        -> ActiveRender
    {
        if let existing = active[resolved.id] { return existing }
        guard accepting else { throw ServiceError.shuttingDown }
        if perCallerCount[caller, default: 0] >= perCaller {
            throw ServiceError(
                .tooManyRequests, .tooManyRenders, "this key already has \(perCaller) renders queued or running; try again when one finishes",
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
            if recorded { try? await executor.forgetAccepted(render.id) }
            let failure = ServiceError(error, during: .render)
            active.removeValue(forKey: render.id)
            releaseCaller(caller)
            render.finish(.failure(failure))
            throw failure
        }
        waiting.append(render)
        executor.queued(depth: waiting.count)
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
    var reserving = 0

    /// Removes an earlier record of render `id` before it is made again (`RenderRunner.replaceEarlier`), inside the
    /// actor: done in the route, a concurrent identical request could remove the folder of the attempt just accepted
    /// (lost at a crash; found by kill9.py), and left for the sweep, it would remove the new one's folder.
    func replaceEarlier(_ id: String, now: Double, createdAt: Double? = nil) async throws {
        try await executor.replaceEarlier(id, now: now, createdAt: createdAt)
    }

    func releaseCaller(_ caller: String) {
        perCallerCount[caller, default: 1] -= 1
        if perCallerCount[caller] == 0 { perCallerCount.removeValue(forKey: caller) }
    }

    func startWaiting() {
        while running.count < workers, !waiting.isEmpty {
            let render = waiting.removeFirst()
            let executor = self.executor
            running[render.id] = Task {
                _ = await executor.execute(render)
                self.finished(render)
            }
        }
        executor.queued(depth: waiting.count)
    }

    func finished(_ render: ActiveRender) {
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
            shared.watcher.claims.wake()  // a worker is free
            return
        }
        releaseCaller(render.caller)
        startWaiting()
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
            render.finish(
                .failure(
                    ServiceError(
                        .serviceUnavailable, .shuttingDown,
                        "the service stopped before this render started; it runs when the service is back",
                        retryAfter: 5)))
        }
        waiting.removeAll()
        // Shared jobs still running go back to the queue: another instance takes them over. (`release` changes only a
        // job this instance still holds as running: one recorded done meanwhile stays done.)
        let unfinished = Array(running.keys)
        if shared != nil { abandoned.formUnion(unfinished) }
        for id in unfinished { active[id]?.markStopped() }  // not failed: they run again after the restart (or elsewhere)
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
