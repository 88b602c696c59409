import Foundation
import Testing
@testable import ChorusAudio

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

    @Test("jobs run in order of submission and every result comes back, across many rounds")
    func manyJobs() async throws {
        let pool = WorkerPool(threads: 1, name: "test-pool-fifo")
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
