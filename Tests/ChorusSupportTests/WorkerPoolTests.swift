import Foundation
import Testing

@testable import ChorusSupport

@Suite("Worker pool")
struct WorkerPoolTests {
    /// Something a job captures, like a message's audio.
    final class Payload: Sendable {
        let samples = [Float](repeating: 0.5, count: 1024)
    }

    @Test("a finished job lets go of what its body captured (a render's audio must not outlive the render)")
    func finishedJobsAreReleased() async throws {
        let pool = WorkerPool(threads: 2, name: "test-pool")
        weak var watched: Payload?
        var sums: [Float] = []
        for _ in 0..<20 {
            let payload = Payload()
            watched = payload
            sums.append(try await pool.run { payload.samples.reduce(0, +) })
        }
        #expect(sums == Array(repeating: 512, count: 20))
        // Only the last payload was still referenced from here; once its job is done, nothing in the
        // pool may hold it. (The worker thread drops its copy of the job just after handing back the result,
        // so allow it a moment; the old queue held it until 1,024 more jobs had passed.)
        for _ in 0..<500 where watched != nil { try await Task.sleep(nanoseconds: 10_000_000) }
        #expect(watched == nil)
    }

    /// The pool's one thread held by a job (recorded as -1 in `order`) until `release` is signalled; returns once it is.
    private func hold(_ pool: WorkerPool, order: ExecutionOrder) async throws -> (release: DispatchSemaphore, blocker: Task<Void, any Error>) {
        let release = DispatchSemaphore(value: 0)
        let blocker = Task {
            try await pool.run {
                order.append(-1)
                release.wait()
            }
        }
        while order.isEmpty { try await Task.sleep(nanoseconds: 1_000_000) }
        return (release, blocker)
    }

    /// Jobs `0..<count` sent to `pool` in order, each queued before the next is sent (urgent where `urgent` says);
    /// each appends its index to `order` and returns twice it.
    private func queue(
        _ count: Int, on pool: WorkerPool, order: ExecutionOrder, urgent: @escaping @Sendable (Int) -> Bool = { _ in false },
        background: @escaping @Sendable (Int) -> Bool = { _ in false }
    ) async throws -> [Task<Int, any Error>] {
        var jobs: [Task<Int, any Error>] = []
        for index in 0..<count {
            jobs.append(
                Task {
                    try await pool.run(urgent: urgent(index), background: background(index)) {
                        order.append(index)
                        return index * 2
                    }
                })
            while pool.waiting < index + 1 { try await Task.sleep(nanoseconds: 100_000) }
        }
        return jobs
    }

    @Test("urgent jobs go before the jobs waiting that are not, first in, first out among themselves")
    func urgentFirst() async throws {
        let pool = WorkerPool(threads: 1, name: "test-pool-urgent")
        let order = ExecutionOrder()
        let (release, blocker) = try await hold(pool, order: order)
        let jobs = try await queue(6, on: pool, order: order) { $0 % 2 == 1 }  // 0, 2, 4 ordinary; 1, 3, 5 urgent
        release.signal()
        try await blocker.value
        for job in jobs { _ = try await job.value }
        #expect(order.values == [-1, 1, 3, 5, 0, 2, 4])
    }

    @Test("background jobs (a voice being made) run only when no other job waits, first in, first out among themselves")
    func backgroundLast() async throws {
        let pool = WorkerPool(threads: 1, name: "test-pool-back")
        let order = ExecutionOrder()
        let (release, blocker) = try await hold(pool, order: order)
        // 0 and 3 in the background, 1 and 4 ordinary, 2 and 5 urgent.
        let jobs = try await queue(6, on: pool, order: order, urgent: { $0 % 3 == 2 }, background: { $0 % 3 == 0 })
        release.signal()
        try await blocker.value
        for job in jobs { _ = try await job.value }
        #expect(order.values == [-1, 2, 5, 1, 4, 0, 3])
    }

    @Test("a run of urgent jobs lets the oldest job not urgent go after every fourth")
    func urgentRunsLetOthersThrough() async throws {
        let pool = WorkerPool(threads: 1, name: "test-pool-fair")
        let order = ExecutionOrder()
        let (release, blocker) = try await hold(pool, order: order)
        let jobs = try await queue(8, on: pool, order: order) { $0 >= 2 }  // 0 and 1 ordinary, 2…7 urgent
        release.signal()
        try await blocker.value
        for job in jobs { _ = try await job.value }
        #expect(order.values == [-1, 2, 3, 4, 5, 0, 6, 7, 1])
    }

    @Test("jobs run in the order they were submitted: queued behind a busy thread, they start first in, first out")
    func submissionOrder() async throws {
        let pool = WorkerPool(threads: 1, name: "test-pool-fifo")
        let order = ExecutionOrder()
        // The one thread is held until every job below is queued, in a known order (each queued before the next is sent).
        let (release, blocker) = try await hold(pool, order: order)
        let jobs = try await queue(200, on: pool, order: order)
        release.signal()
        try await blocker.value
        var results: [Int] = []
        for job in jobs { results.append(try await job.value) }
        #expect(results == (0..<200).map { $0 * 2 })
        #expect(order.values == [-1] + Array(0..<200), "ran in the order \(order.values.prefix(20))…")
    }

    @Test("every result comes back to its caller across thousands of jobs from many tasks at once")
    func manyJobs() async throws {
        let pool = WorkerPool(threads: 2, name: "test-pool-many")
        let results = try await withThrowingTaskGroup(of: (Int, Int).self) { group in
            for index in 0..<3000 { group.addTask { (index, try await pool.run { index * 2 }) } }
            var all: [Int: Int] = [:]
            for try await (index, value) in group { all[index] = value }
            return all
        }
        #expect(results.count == 3000)
        #expect(results.allSatisfy { $0.value == $0.key * 2 })
        #expect(pool.waiting == 0)
    }
}

/// The order jobs ran in, appended from the pool's thread.
final class ExecutionOrder: @unchecked Sendable {
    private let lock = NSLock()
    private var list: [Int] = []
    func append(_ value: Int) { lock.withLock { list.append(value) } }
    var values: [Int] { lock.withLock { list } }
    var isEmpty: Bool { lock.withLock { list.isEmpty } }
}
