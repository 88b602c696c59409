import Foundation
import Logging

/// Runs renders at most `workers` at a time, keeps at most `queueLimit` waiting (503 beyond), and at
/// most `perCaller` queued or running per key (429 beyond). The same render requested again while it
/// runs is joined, not repeated. On shutdown it stops taking renders and lets the running ones finish
/// within the timeout; then they are cancelled, and they and the ones still waiting are recorded as failed.
/// A render is on disk from the moment it is accepted (`RenderExecutor.accept`), so none is ever lost.
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

    init(workers: Int, queueLimit: Int, perCaller: Int, executor: RenderExecutor) {
        self.workers = workers
        self.queueLimit = queueLimit
        self.perCaller = perCaller
        self.executor = executor
    }

    /// The queued or running render `id`, if any.
    func find(_ id: String) -> ActiveRender? { active[id] }

    /// Renders waiting and running.
    var depth: (waiting: Int, running: Int) { (waiting.count, running.count) }

    /// Starts `resolved` (or joins it if it is already under way).
    /// - Throws: `ServiceError` 503 when the queue is full or the service is stopping, 429 when `caller` has too many.
    func submit(_ resolved: ResolvedRender, caller: String, retention: Double, now: Double = Date().timeIntervalSince1970) throws -> ActiveRender {
        if let existing = active[resolved.id] { return existing }
        guard accepting else { throw ServiceError.shuttingDown }
        if perCallerCount[caller, default: 0] >= perCaller {
            throw ServiceError(.tooManyRequests, "too_many_renders", "this key already has \(perCaller) renders queued or running; try again when one finishes",
                               retryAfter: 5)
        }
        if running.count >= workers && waiting.count >= queueLimit {
            throw ServiceError.overloaded(retryAfter: max(1, waiting.count / max(1, workers)))
        }
        let render = ActiveRender(resolved: resolved, caller: caller, createdAt: now, expiresAt: now + retention)
        // A failed earlier attempt is replaced here, inside the actor: done in the route, a concurrent identical
        // request could remove the folder of the attempt just accepted (lost at a crash; found by kill9.py).
        if let earlier = executor.store.get(resolved.id), !earlier.isDone { executor.store.remove(resolved.id) }
        try executor.accept(render)
        active[render.id] = render
        perCallerCount[caller, default: 0] += 1
        waiting.append(render)
        executor.metrics.queue(depth: waiting.count)
        startWaiting()
        return render
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
        perCallerCount[render.caller, default: 1] -= 1
        if perCallerCount[render.caller] == 0 { perCallerCount.removeValue(forKey: render.caller) }
        startWaiting()
    }

    /// Stops taking renders; waits up to `timeout` seconds for accepted ones, then cancels what is left.
    func shutdown(timeout: Double) async {
        accepting = false
        let deadline = Date().addingTimeInterval(timeout)
        while !active.isEmpty && Date() < deadline {
            try? await Task.sleep(nanoseconds: 50_000_000)
        }
        for render in waiting {
            active.removeValue(forKey: render.id)
            let failure = ServiceError(.serviceUnavailable, "shutting_down", "the service stopped before this render started; send the request again",
                                       retryAfter: 5)
            executor.recordFailure(of: render, failure)
            render.finish(.failure(failure))
        }
        waiting.removeAll()
        for task in running.values { task.cancel() }
        for task in running.values { await task.value }
    }
}
