import ChorusAudio
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
final class ActiveRender: @unchecked Sendable {
    let resolved: ResolvedRender
    let caller: String
    let createdAt: Double
    let expiresAt: Double
    /// The encoded audio while it is produced (MP3 and Ogg), for streaming listeners.
    let audio: Broadcast<Data>?
    /// Its events: progress (live only), segments (kept), and at the end `done` or `failed`.
    private let events = Broadcast<RenderFeedEvent>()
    private let lock = NSLock()
    private var status = RenderManifest.Status.queued
    private var progress: RenderProgressBody
    private var outcome: Result<StoredRender, ServiceError>?
    private var waiters: [CheckedContinuation<Result<StoredRender, ServiceError>, Never>] = []
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
        progress = RenderProgressBody(synthesized: recorded, rendered: 0, total: resolved.conversation.messages.count)
    }

    /// The manifest while it is queued or running.
    func manifest() -> RenderManifest {
        lock.lock()
        defer { lock.unlock() }
        var manifest = RenderManifest(id: id, status: status, createdAt: Timestamp.iso(createdAt), expiresAt: Timestamp.iso(expiresAt))
        manifest.progress = progress
        manifest.format = resolved.format.rawValue
        return manifest
    }

    private var stopped = false

    /// Stopped by the service, not failed: at shutdown (it runs again after the restart) or when another instance took
    /// it over. Its cancellation is then not recorded as its failure.
    var isStopped: Bool {
        lock.lock()
        defer { lock.unlock() }
        return stopped
    }

    func markStopped() {
        lock.lock()
        stopped = true
        lock.unlock()
    }

    func markRunning() {
        lock.lock()
        status = .running
        lock.unlock()
    }

    /// New counts from the engine (recorded clips count as synthesized from the start).
    func update(synthesizedText: Int, rendered: Int) {
        lock.lock()
        progress = RenderProgressBody(synthesized: recorded + synthesizedText, rendered: rendered, total: progress.total)
        let current = progress
        lock.unlock()
        events.send(.progress(current), keep: false)
    }

    func add(_ segment: Timeline.Segment) { events.send(.segment(segment)) }

    /// Ends the render for everyone listening or waiting.
    func finish(_ result: Result<StoredRender, ServiceError>) {
        lock.lock()
        outcome = result
        status = (try? result.get()) == nil ? .failed : .done
        let waiting = waiters
        waiters.removeAll()
        lock.unlock()
        switch result {
        case .success(let stored): events.finish(last: [.done(stored)])
        case .failure(let error): events.finish(last: [.failed(error)])
        }
        waiting.forEach { $0.resume(returning: result) }
    }

    /// Progress now and every segment so far, then live events until the end (`done` or `failed`).
    func listen() -> AsyncThrowingStream<RenderFeedEvent, any Error> {
        lock.lock()
        let current = progress
        lock.unlock()
        return events.listen(first: [.progress(current)])
    }

    /// Waits for the end.
    func completion() async -> Result<StoredRender, ServiceError> {
        await withCheckedContinuation { continuation in
            lock.lock()
            if let outcome {
                lock.unlock()
                continuation.resume(returning: outcome)
            } else {
                waiters.append(continuation)
                lock.unlock()
            }
        }
    }
}
