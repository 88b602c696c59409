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
/// encoded, and everyone waiting for it. A listener that joins late first hears every segment so far.
final class ActiveRender: @unchecked Sendable {
    let resolved: ResolvedRender
    let caller: String
    let createdAt: Double
    let expiresAt: Double
    /// The encoded audio while it is produced (MP3 and Ogg), for streaming listeners.
    let audio: AudioTap?
    private let lock = NSLock()
    private var status = RenderManifest.Status.queued
    private var progress: RenderProgressBody
    private var segments: [Timeline.Segment] = []
    private var outcome: Result<StoredRender, ServiceError>?
    private var listeners: [Int: AsyncStream<RenderFeedEvent>.Continuation] = [:]
    private var nextListener = 0
    private var waiters: [CheckedContinuation<Result<StoredRender, ServiceError>, Never>] = []

    var id: String { resolved.id }

    init(resolved: ResolvedRender, caller: String, createdAt: Double, expiresAt: Double) {
        self.resolved = resolved
        self.caller = caller
        self.createdAt = createdAt
        self.expiresAt = expiresAt
        audio = resolved.format.isStreamable ? AudioTap() : nil
        let recorded = resolved.conversation.messages.filter { !$0.needsSynthesis }.count
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
        let recorded = resolved.conversation.messages.filter { !$0.needsSynthesis }.count
        progress = RenderProgressBody(synthesized: recorded + synthesizedText, rendered: rendered, total: progress.total)
        let event = RenderFeedEvent.progress(progress)
        let current = Array(listeners.values)
        lock.unlock()
        current.forEach { $0.yield(event) }
    }

    func add(_ segment: Timeline.Segment) {
        lock.lock()
        segments.append(segment)
        let current = Array(listeners.values)
        lock.unlock()
        current.forEach { $0.yield(.segment(segment)) }
    }

    /// Ends the render for everyone listening or waiting.
    func finish(_ result: Result<StoredRender, ServiceError>) {
        lock.lock()
        outcome = result
        status = (try? result.get()) == nil ? .failed : .done
        let current = Array(listeners.values)
        listeners.removeAll()
        let waiting = waiters
        waiters.removeAll()
        lock.unlock()
        let event: RenderFeedEvent
        switch result {
        case .success(let stored): event = .done(stored)
        case .failure(let error): event = .failed(error)
        }
        for listener in current {
            listener.yield(event)
            listener.finish()
        }
        waiting.forEach { $0.resume(returning: result) }
    }

    /// Progress and every segment so far, then live events until the end.
    func listen() -> AsyncStream<RenderFeedEvent> {
        let (stream, continuation) = AsyncStream.makeStream(of: RenderFeedEvent.self)
        lock.lock()
        continuation.yield(.progress(progress))
        segments.forEach { continuation.yield(.segment($0)) }
        if let outcome {
            lock.unlock()
            switch outcome {
            case .success(let stored): continuation.yield(.done(stored))
            case .failure(let error): continuation.yield(.failed(error))
            }
            continuation.finish()
            return stream
        }
        let id = nextListener
        nextListener += 1
        listeners[id] = continuation
        lock.unlock()
        continuation.onTermination = { [weak self] _ in self?.removeListener(id) }
        return stream
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

    private func removeListener(_ id: Int) {
        lock.lock()
        listeners.removeValue(forKey: id)
        lock.unlock()
    }
}
