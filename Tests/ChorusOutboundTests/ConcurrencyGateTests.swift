import Foundation
import Testing

@testable import ChorusOutbound

@Suite("Concurrency gate")
struct ConcurrencyGateTests {
    /// Counts how many bodies are inside at once.
    actor Occupancy {
        var now = 0
        var most = 0
        var done = 0
        func enter() {
            now += 1
            most = max(most, now)
        }
        func leave() {
            now -= 1
            done += 1
        }
    }

    @Test("never more than its limit inside, under contention from many tasks", arguments: [1, 3, 8])
    func neverAboveLimit(limit: Int) async throws {
        let gate = ConcurrencyGate(limit: limit)
        let occupancy = Occupancy()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<200 {
                group.addTask {
                    try await gate.run {
                        await occupancy.enter()
                        if index % 3 == 0 { try await Task.sleep(nanoseconds: 200_000) } else { await Task.yield() }
                        await occupancy.leave()
                    }
                }
            }
            try await group.waitForAll()
        }
        #expect(await occupancy.most == limit)
        #expect(await occupancy.done == 200)
        #expect(await gate.inFlight == 0)
        #expect(await gate.queued == 0)
    }

    @Test("a cancelled waiter leaves the queue without taking a slot; a failing body frees its slot")
    func cancellationAndFailure() async throws {
        let gate = ConcurrencyGate(limit: 1)
        let (release, releaser) = AsyncStream.makeStream(of: Void.self)
        let holder = Task { try await gate.run { for await _ in release { break } } }
        try await eventually { await gate.inFlight == 1 }
        let waiter = Task { try await gate.run { "ran" } }
        try await eventually { await gate.queued == 1 }
        waiter.cancel()
        await #expect(throws: CancellationError.self) { _ = try await waiter.value }
        #expect(await gate.queued == 0)
        #expect(await gate.inFlight == 1, "the holder still has the only slot")
        releaser.yield()
        try await holder.value
        struct Boom: Error {}
        await #expect(throws: Boom.self) { try await gate.run { throw Boom() } }
        #expect(try await gate.run { "free again" } == "free again")
        #expect(await gate.inFlight == 0)
    }

    /// Waits (up to 5 s) until `condition` holds.
    func eventually(_ condition: () async -> Bool) async throws {
        for _ in 0..<500 {
            if await condition() { return }
            try await Task.sleep(nanoseconds: 10_000_000)
        }
        Issue.record("condition never held")
    }
}
