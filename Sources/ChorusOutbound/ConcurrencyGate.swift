/// At most `limit` tasks inside at once (a provider's requests in flight, across every render of a
/// `Chorus`). Waiters are served in arrival order; a waiter whose task is cancelled leaves the queue
/// and throws `CancellationError`.
///
/// ```swift
/// let gate = ConcurrencyGate(limit: 4)
/// let speech = try await gate.run { try await provider.synthesize(request) }
/// ```
package actor ConcurrencyGate {
    package let limit: Int
    package private(set) var inFlight = 0
    private var waiting: [(id: Int, continuation: CheckedContinuation<Void, any Error>)] = []
    private var nextID = 0

    package init(limit: Int) { self.limit = max(1, limit) }

    /// Tasks waiting for a slot.
    package var queued: Int { waiting.count }

    package func acquire() async throws {
        try Task.checkCancellation()
        if inFlight < limit {
            inFlight += 1
            return
        }
        let id = nextID
        nextID += 1
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                waiting.append((id, continuation))
            }
        } onCancel: {
            Task { await self.cancelWaiter(id) }
        }
    }

    /// Hands the slot to the next waiter, or frees it.
    package func release() {
        if waiting.isEmpty {
            inFlight -= 1
        } else {
            waiting.removeFirst().continuation.resume()
        }
    }

    private func cancelWaiter(_ id: Int) {
        guard let position = waiting.firstIndex(where: { $0.id == id }) else { return }
        waiting.remove(at: position).continuation.resume(throwing: CancellationError())
    }

    /// Runs `body` holding one slot.
    package func run<T: Sendable>(_ body: @Sendable () async throws -> T) async throws -> T {
        try await acquire()
        defer { release() }
        return try await body()
    }
}
