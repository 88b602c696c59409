import ChorusSupport
import ChorusWire
import Foundation
import Logging
import PostgresNIO
import ServiceLifecycle

/// What this instance hears of the shared jobs (`LISTEN chorus_renders`): requests waiting for a render another
/// instance runs are told when its row changes, and the claim loop is woken when a job is queued. Notifications are
/// hints, not the truth: whoever is woken reads the row, and everyone also looks again every second or two, so a
/// notification lost while the listening connection was down delays, never loses, anything.
final class QueueWatcher: Sendable {
    private typealias DeletedHandler = @Sendable (_ id: String, _ createdAt: Double) -> Void
    private struct State {
        var waiters: [String: [UUID: Signal]] = [:]
        var deleted: DeletedHandler?
    }
    private let state = Locked(State())
    let claims = Signal()

    /// Calls `body` with a signal woken whenever render `id`'s row may have changed (registered before `body` runs,
    /// so a change between reading the row and waiting is not missed).
    func watching<T>(_ id: String, _ body: (Signal) async throws -> T) async rethrows -> T {
        let signal = Signal()
        let token = UUID()
        state.withLock { $0.waiters[id, default: [:]][token] = signal }
        defer {
            state.withLock { state in
                state.waiters[id]?.removeValue(forKey: token)
                if state.waiters[id]?.isEmpty == true { state.waiters.removeValue(forKey: id) }
            }
        }
        return try await body(signal)
    }

    /// Sets what to do when a render is deleted (on any instance): `createdAt` tells that render from one made again.
    func whenDeleted(_ handler: @escaping @Sendable (_ id: String, _ createdAt: Double) -> Void) {
        state.withLock { $0.deleted = handler }
    }

    /// A notification's payload: `<id> <status>`, or `<id> deleted <created_at>`.
    func dispatch(_ payload: String) {
        let parts = payload.split(separator: " ", maxSplits: 1)
        guard let id = parts.first.map(String.init) else { return }
        if parts.count > 1, parts[1] == "queued" { claims.wake() }
        if parts.count > 1, parts[1].hasPrefix("deleted "), let createdAt = Double(parts[1].dropFirst(8)),
            let handler = state.withLock({ $0.deleted })
        {
            handler(id, createdAt)
        }
        let current = state.withLock { $0.waiters[id].map { Array($0.values) } ?? [] }
        current.forEach { $0.wake() }
    }

    /// Every waiter (the listening connection came back: anything may have changed meanwhile).
    func wakeAll() {
        let current = state.withLock { $0.waiters.values.flatMap(\.values) }
        current.forEach { $0.wake() }
        claims.wake()
    }
}

/// A wake-up with a timeout for one waiting task; a wake with nobody waiting is kept for the next wait.
final class Signal: Sendable {
    private struct State {
        var pending = false
        var waiter: CheckedContinuation<Void, Never>?
        var generation = 0
    }
    private let state = Locked(State())

    func wake() {
        let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
            guard let waiter = state.waiter else {
                state.pending = true
                return nil
            }
            state.waiter = nil
            return waiter
        }
        waiter?.resume()
    }

    /// Returns when woken or after `timeout` seconds, whichever is first.
    func wait(timeout: Double) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            // nil: a wake was pending, so this wait is over at once.
            let mine = state.withLock { state -> Int? in
                if state.pending {
                    state.pending = false
                    return nil
                }
                state.generation += 1
                state.waiter = continuation
                return state.generation
            }
            guard let mine else {
                continuation.resume()
                return
            }
            Task {
                try? await Task.sleep(nanoseconds: UInt64(timeout * 1e9))
                self.timeOut(mine)
            }
        }
    }

    private func timeOut(_ generation: Int) {
        let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
            guard state.generation == generation, let waiter = state.waiter else { return nil }
            state.waiter = nil
            return waiter
        }
        waiter?.resume()
    }
}

/// Keeps one connection listening on `chorus_renders` for the life of the service, reconnecting after a second when
/// it is lost.
struct QueueListenService: Service, CustomStringConvertible {
    let database: PostgresDatabase
    let watcher: QueueWatcher
    let logger: Logger
    var description: String { "JobListener" }

    func run() async throws {
        await cancelWhenGracefulShutdown {
            var failures = 0
            while !Task.isCancelled {
                do {
                    try await database.client.withConnection { connection in
                        try await connection.listen(on: SharedQueue.channel) { notifications in
                            if failures > 0 { logger.info("listening to the database again") }
                            failures = 0
                            watcher.wakeAll()
                            for try await notification in notifications { watcher.dispatch(notification.payload) }
                        }
                    }
                } catch {
                    if Task.isCancelled { return }
                    if failures == 0 {
                        logger.warning(
                            "database notifications lost; renders of other instances are polled meanwhile",
                            metadata: ["error": .string("\(PostgresDatabase.converted(error, operation: "listen"))")])
                    }
                    failures += 1
                }
                try? await Task.sleep(nanoseconds: 1_000_000_000)
            }
        }
    }
}
