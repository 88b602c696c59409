import ChorusAudio
import ChorusSupport
import ChorusWire
import Foundation

/// What a render's listeners hear (SSE, waiting requests).
enum RenderFeedEvent: Sendable {
    case progress(RenderProgressBody)
    case segment(Timeline.Segment)
    case done(StoredRender)
    case failed(ServiceError)
}

/// A render that is queued or running: its progress, the segments fixed so far, its audio as it is
/// encoded, and everyone waiting for it. A listener that joins late first hears every segment so far (`Broadcast`).
final class ActiveRender: Sendable {
    let resolved: ResolvedRender
    let caller: String
    let createdAt: Double
    let expiresAt: Double
    /// The encoded audio while it is produced (MP3 and Ogg), for streaming listeners.
    let audio: Broadcast<Data>?
    /// Its events: progress (live only), segments (kept), and at the end `done` or `failed`.
    private let events = Broadcast<RenderFeedEvent>()
    private struct State {
        var status = RenderManifest.Status.queued
        var progress: RenderProgressBody
        var outcome: Result<StoredRender, ServiceError>?
        var waiters: [CheckedContinuation<Result<StoredRender, ServiceError>, Never>] = []
        /// Stopped by the service, not failed (`isStopped`).
        var stopped = false
    }
    private let state: Locked<State>
    /// Recorded clips count as synthesized from the start.
    private let recorded: Int

    var id: String { resolved.id }

    init(resolved: ResolvedRender, caller: String, createdAt: Double, expiresAt: Double) {
        self.resolved = resolved
        self.caller = caller
        self.createdAt = createdAt
        self.expiresAt = expiresAt
        audio = resolved.format.isStreamable ? Broadcast() : nil
        recorded = resolved.conversation.messages.filter { !$0.needsSynthesis }.count
        state = Locked(State(progress: RenderProgressBody(synthesized: recorded, rendered: 0, total: resolved.conversation.messages.count)))
    }

    /// The manifest while it is queued or running.
    func manifest() -> RenderManifest {
        state.withLock { state in
            var manifest = RenderManifest(id: id, status: state.status, createdAt: Timestamp.iso(createdAt), expiresAt: Timestamp.iso(expiresAt))
            manifest.progress = state.progress
            manifest.format = resolved.format.rawValue
            return manifest
        }
    }

    /// Stopped by the service, not failed: at shutdown (it runs again after the restart) or when another instance took
    /// it over. Its cancellation is then not recorded as its failure.
    var isStopped: Bool { state.withLock { $0.stopped } }

    func markStopped() { state.withLock { $0.stopped = true } }

    func markRunning() { state.withLock { $0.status = .running } }

    /// New counts from the engine (recorded clips count as synthesized from the start).
    func update(synthesizedText: Int, rendered: Int) {
        let current = state.withLock { state in
            state.progress = RenderProgressBody(synthesized: recorded + synthesizedText, rendered: rendered, total: state.progress.total)
            return state.progress
        }
        events.send(.progress(current), keep: false)
    }

    func add(_ segment: Timeline.Segment) { events.send(.segment(segment)) }

    /// Ends the render for everyone listening or waiting.
    func finish(_ result: Result<StoredRender, ServiceError>) {
        let waiting = state.withLock { state in
            state.outcome = result
            state.status = (try? result.get()) == nil ? .failed : .done
            let waiting = state.waiters
            state.waiters.removeAll()
            return waiting
        }
        switch result {
        case .success(let stored): events.finish(last: [.done(stored)])
        case .failure(let error): events.finish(last: [.failed(error)])
        }
        waiting.forEach { $0.resume(returning: result) }
    }

    /// Progress now and every segment so far, then live events until the end (`done` or `failed`).
    func listen() -> AsyncThrowingStream<RenderFeedEvent, any Error> {
        let current = state.withLock { $0.progress }
        return events.listen(first: [.progress(current)])
    }

    /// Waits for the end.
    func completion() async -> Result<StoredRender, ServiceError> {
        await withCheckedContinuation { continuation in
            let outcome = state.withLock { state -> Result<StoredRender, ServiceError>? in
                if let outcome = state.outcome { return outcome }
                state.waiters.append(continuation)
                return nil
            }
            if let outcome { continuation.resume(returning: outcome) }
        }
    }
}
