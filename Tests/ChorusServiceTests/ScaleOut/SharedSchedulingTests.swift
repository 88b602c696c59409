import ChorusAudio
import ChorusConversation
import ChorusWire
import Foundation
import Logging
import Testing

@testable import ChorusService
@testable import ChorusSpeech

/// The scheduler's shared-queue half (`RenderScheduler+SharedQueue`) on its own: an in-memory queue stands for
/// PostgreSQL and a recording runner for the executor, so claims, leases, completions and give-backs are checked
/// decision by decision (the same protocol runs against a real PostgreSQL in `SharedJobsTests`).
@Suite("Render scheduler: the shared queue's half")
struct SharedSchedulingTests {
    /// Runs renders as the executor would, recording what it was asked; a render runs until `finish(_:)` unless it is
    /// cancelled first (a stopped render ends in a failure, which the scheduler must not record).
    final class RecordingRunner: RenderRunner, @unchecked Sendable {
        private let lock = NSLock()
        private var log: [String] = []
        private var releases: [String: CheckedContinuation<Void, Never>] = [:]
        private var released: Set<String> = []

        init() {}

        var events: [String] { lock.withLock { log } }
        func note(_ event: String) { lock.withLock { log.append(event) } }

        func accept(_ active: ActiveRender, request: Data?) async throws { note("accept \(active.id)") }
        func forgetAccepted(_ id: String) async throws { note("forget \(id)") }
        func replaceEarlier(_ id: String, now: Double, createdAt: Double?) async throws {}
        func queued(depth: Int) {}
        func claimed(waited: Double) {}

        func execute(_ active: ActiveRender, record: @Sendable (Result<StoredRender, ServiceError>) async -> Void) async -> StoredRender? {
            note("run \(active.id)")
            active.markRunning()
            await withTaskCancellationHandler {
                await withCheckedContinuation { continuation in
                    let ready = lock.withLock { () -> Bool in
                        if released.contains(active.id) { return true }
                        releases[active.id] = continuation
                        return false
                    }
                    if ready { continuation.resume() }
                }
            } onCancel: {
                self.finish(active.id)
            }
            let result: Result<StoredRender, ServiceError>
            if Task.isCancelled {
                result = .failure(.shuttingDown)
            } else {
                var manifest = RenderManifest(id: active.id, status: .done, createdAt: "", expiresAt: "")
                manifest.format = "mp3"
                result = .success(
                    StoredRender(manifest: manifest, etag: "\"e\"", audioBytes: 1, createdAt: active.createdAt, expiresAt: active.expiresAt))
            }
            await record(result)
            active.finish(result)
            note(Task.isCancelled ? "stopped \(active.id)" : "done \(active.id)")
            return try? result.get()
        }

        /// Lets render `id` finish (now, or as soon as it starts).
        func finish(_ id: String) {
            let continuation = lock.withLock { () -> CheckedContinuation<Void, Never>? in
                released.insert(id)
                return releases.removeValue(forKey: id)
            }
            continuation?.resume()
        }
    }

    /// The shared queue in memory: entries, claims, renewals (answered as `renewals` says), completions, give-backs.
    actor MemoryQueue: SharedQueueing {
        nonisolated let lease: Double
        nonisolated let deadline = 1.0
        private var queued: [(id: String, request: Data)] = []
        private(set) var completed: [String: StoredRender] = [:]
        private(set) var releasedIDs: [String] = []
        private(set) var renewals = 0
        /// Whether a renewal finds the entry still this instance's.
        var renewalsHold = true

        init(lease: Double) { self.lease = lease }

        func add(_ id: String, request: Data = Data(#"{"messages": [{"speaker": "A", "text": "Hi."}]}"#.utf8)) { queued.append((id, request)) }
        func refuseRenewals() { renewalsHold = false }

        func enqueue(
            id: String, caller: String, request: Data, format: String, createdAt: Double, expiresAt: Double, perCaller: Int,
            queueLimit: Int
        ) async throws -> SharedQueue.Enqueued {
            queued.append((id, request))
            return .queued
        }

        func claim(id: String?) async throws -> SharedQueue.Claim? {
            if claimsToLose > 0 {
                claimsToLose -= 1
                throw DatabaseError(kind: .unavailable, operation: "claim a render", reason: "no answer within 1 s")
            }
            guard let index = queued.firstIndex(where: { id == nil || $0.id == id }) else { return nil }
            let (claimed, request) = queued.remove(at: index)
            let entry = SharedQueue.Entry(
                id: claimed, status: .running, caller: "caller", createdAt: 1, expiresAt: 1e10, attempts: 1, request: request,
                format: "mp3")
            return SharedQueue.Claim(job: entry, request: request, waited: 0)
        }

        func renew(_ id: String, progress: RenderProgressBody?, deadline: Double?) async throws -> Bool {
            renewals += 1
            return renewalsHold
        }

        func complete(_ id: String, record: StoredRender, deadline: Double?) async throws -> Bool {
            completed[id] = record
            return true
        }

        func release(_ id: String, deadline: Double?) async throws { releasedIDs.append(id) }

        /// Entries claimed for this instance without it hearing so (a claim whose answer was lost), and the next claims
        /// to lose: each takes its entry and throws, as a claim held up by the network does.
        private var heldUnknown: Set<String> = []
        private var claimsToLose = 0
        private(set) var givenBack: [String] = []
        func loseNextClaim() { claimsToLose += 1 }
        /// A lost claim arriving at the database late: the entry becomes this instance's.
        func land(_ id: String) {
            queued.removeAll { $0.id == id }
            heldUnknown.insert(id)
        }
        var held: Set<String> { heldUnknown }

        func releaseUnknown(running: [String]) async throws {
            for id in heldUnknown.subtracting(running).sorted() {
                heldUnknown.remove(id)
                givenBack.append(id)
                queued.append((id, Data(#"{"messages": [{"speaker": "A", "text": "Hi."}]}"#.utf8)))
            }
        }

    }

    static func scheduler(
        workers: Int, queue: MemoryQueue, runner: RecordingRunner,
        resolve: @escaping @Sendable (RenderRequest) async throws -> ResolvedRender = { _ in throw ServiceError.invalid("unused") }
    )
        -> RenderScheduler
    {
        let shared = RenderScheduler.SharedQueueAccess(queue: queue, watcher: QueueWatcher(), resolve: resolve, logger: Logger(label: "test"))
        return RenderScheduler(workers: workers, queueLimit: 8, perCaller: 8, executor: runner, shared: shared)
    }

    /// A resolver that makes a one-message render of whatever it is asked.
    static let resolve: @Sendable (RenderRequest) async throws -> ResolvedRender = { _ in
        try ResolvedRender(
            id: "",
            plan: RenderPlan(
                conversation: Conversation(messages: [.init(speaker: "A", text: "Hi.")]), voices: [VoiceID("espeak:en-us")], options: RenderOptions()),
            format: .mp3)
    }

    static func id(_ digit: Character) -> String { String(repeating: digit, count: RenderIdentity.length) }

    static func eventually(_ condition: @Sendable () async -> Bool) async throws {
        for _ in 0..<500 where await !condition() { try await Task.sleep(nanoseconds: 10_000_000) }
        #expect(await condition())
    }

    /// Waits for render `id` to run here, lets it finish, and waits for its end recorded and its worker free.
    static func runToEnd(_ id: String, runner: RecordingRunner, queue: MemoryQueue, scheduler: RenderScheduler) async throws {
        try await eventually { runner.events.contains("run \(id)") }
        runner.finish(id)
        try await eventually { await queue.completed[id] != nil }
        try await eventually { await scheduler.depth.running == 0 }
    }

    @Test("a claim whose answer was lost and that lands late (the network held it up) is given back by the claims after it, for a lease")
    func lateLostClaim() async throws {
        let queue = MemoryQueue(lease: 15)
        let runner = RecordingRunner()
        let scheduler = Self.scheduler(workers: 1, queue: queue, runner: runner, resolve: Self.resolve)
        let late = Self.id("c")
        await queue.add(late)
        await queue.loseNextClaim()
        await #expect(throws: DatabaseError.self) { try await scheduler.claimNext() }
        // The lost claim lands before the next claim: that claim gives the render back, then claims and runs it.
        await queue.land(late)
        #expect(try await scheduler.claimNext())
        #expect(await queue.givenBack == [late])
        #expect(await queue.held.isEmpty)
        try await Self.runToEnd(late, runner: runner, queue: queue, scheduler: scheduler)
        // Landing after a claim that found nothing to give back: the claims within a lease still give it back.
        let later = Self.id("d")
        await queue.add(later)
        await queue.loseNextClaim()
        await #expect(throws: DatabaseError.self) { try await scheduler.claimNext() }
        #expect(try await scheduler.claimNext() == true)  // claims and runs it…
        try await Self.runToEnd(later, runner: runner, queue: queue, scheduler: scheduler)
        let third = Self.id("e")
        await queue.land(third)  // …and a lost claim of another render lands after that
        _ = try await scheduler.claimNext()
        #expect(await queue.givenBack == [late, third])
        try await Self.runToEnd(third, runner: runner, queue: queue, scheduler: scheduler)
    }

    @Test("a queued render is claimed when a worker is free, run once, and its end recorded in the queue before anyone hears it")
    func claimRunComplete() async throws {
        let queue = MemoryQueue(lease: 15)
        let runner = RecordingRunner()
        let scheduler = Self.scheduler(workers: 1, queue: queue, runner: runner, resolve: Self.resolve)
        let first = Self.id("a")
        await queue.add(first)
        #expect(try await scheduler.claimNext())
        runner.finish(first)
        try await Self.eventually { await queue.completed[first] != nil }
        #expect(await queue.completed[first]?.isDone == true)
        try await Self.eventually { runner.events.contains("done \(first)") }
        #expect(runner.events == ["accept \(first)", "run \(first)", "done \(first)"])
        #expect(try await !scheduler.claimNext(), "nothing left to claim")
    }

    @Test("with every worker busy nothing is claimed; a worker set free claims the next")
    func busyWorkers() async throws {
        let queue = MemoryQueue(lease: 15)
        let runner = RecordingRunner()
        let scheduler = Self.scheduler(workers: 1, queue: queue, runner: runner, resolve: Self.resolve)
        let (first, second) = (Self.id("a"), Self.id("b"))
        await queue.add(first)
        await queue.add(second)
        #expect(try await scheduler.claimNext())
        #expect(try await !scheduler.claimNext(), "the one worker runs the first")
        #expect(runner.events.filter { $0.hasPrefix("run") } == ["run \(first)"])
        runner.finish(first)
        try await Self.eventually { await scheduler.depth.running == 0 }
        #expect(try await scheduler.claimNext())
        runner.finish(second)
        try await Self.eventually { await queue.completed.count == 2 }
    }

    @Test("a claimed request that cannot be resolved here is completed as failed, saying why, and nothing runs")
    func unresolvable() async throws {
        let queue = MemoryQueue(lease: 15)
        let runner = RecordingRunner()
        let scheduler = Self.scheduler(workers: 1, queue: queue, runner: runner) { _ in
            throw ServiceError.invalid("messages[0].clip: no uploaded clip", field: "messages[0].clip", code: .clipNotFound)
        }
        let id = Self.id("c")
        await queue.add(id, request: Data(#"{"messages": [{"speaker": "A", "clip": "gone"}]}"#.utf8))
        #expect(try await scheduler.claimNext())
        let record = try #require(await queue.completed[id])
        #expect(!record.isDone && record.manifest.error?.code == "clip_not_found" && record.manifest.error?.field == "messages[0].clip")
        #expect(runner.events.isEmpty)
    }

    @Test("a lease the queue says is another instance's stops the render here: its end is not recorded, and the entry is given back")
    func takenOver() async throws {
        let queue = MemoryQueue(lease: 0.6)
        let runner = RecordingRunner()
        let scheduler = Self.scheduler(workers: 1, queue: queue, runner: runner, resolve: Self.resolve)
        let id = Self.id("d")
        await queue.add(id)
        #expect(try await scheduler.claimNext())
        await queue.refuseRenewals()
        try await Self.eventually { runner.events.contains("stopped \(id)") }
        try await Self.eventually { await scheduler.depth.running == 0 }
        #expect(await queue.renewals >= 1)
        #expect(await queue.completed.isEmpty, "a render stopped here is not recorded as failed")
        try await Self.eventually { await queue.releasedIDs == [id] }
    }

    @Test("at shutdown a running shared render goes back to the queue, not failed; a renewing lease keeps it meanwhile")
    func shutdownGivesBack() async throws {
        let queue = MemoryQueue(lease: 0.6)
        let runner = RecordingRunner()
        let scheduler = Self.scheduler(workers: 1, queue: queue, runner: runner, resolve: Self.resolve)
        let id = Self.id("e")
        await queue.add(id)
        #expect(try await scheduler.claimNext())
        try await Self.eventually { await queue.renewals >= 2 }
        #expect(runner.events.contains("run \(id)") && !runner.events.contains("stopped \(id)"), "renewed leases keep it running")
        await scheduler.shutdown(timeout: 0.1)
        #expect(runner.events.contains("stopped \(id)"))
        #expect(await queue.completed.isEmpty)
        #expect(await queue.releasedIDs == [id])
        #expect(try await !scheduler.claimNext(), "a scheduler shutting down claims nothing")
    }
}
