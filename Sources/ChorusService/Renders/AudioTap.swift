import Foundation

/// A render's encoded audio as it is produced, kept whole until the render ends, so every listener
/// (`?stream=true`, joining at any time) hears it from the first byte. Bounded by the output's size.
final class AudioTap: @unchecked Sendable {
    private let lock = NSLock()
    private var chunks: [Data] = []
    private var ended = false
    private var failure: (any Error)?
    private var listeners: [Int: AsyncThrowingStream<Data, any Error>.Continuation] = [:]
    private var nextListener = 0

    func append(_ chunk: Data) {
        lock.lock()
        chunks.append(chunk)
        let current = Array(listeners.values)
        lock.unlock()
        for listener in current { listener.yield(chunk) }
    }

    func finish(throwing error: (any Error)? = nil) {
        lock.lock()
        ended = true
        failure = error
        let current = Array(listeners.values)
        listeners.removeAll()
        lock.unlock()
        for listener in current { listener.finish(throwing: error) }
    }

    /// Everything so far, then each chunk as it comes, then the end (or the render's error).
    func listen() -> AsyncThrowingStream<Data, any Error> {
        let (stream, continuation) = AsyncThrowingStream.makeStream(of: Data.self)
        lock.lock()
        for chunk in chunks { continuation.yield(chunk) }
        if ended {
            lock.unlock()
            continuation.finish(throwing: failure)
            return stream
        }
        let id = nextListener
        nextListener += 1
        listeners[id] = continuation
        lock.unlock()
        continuation.onTermination = { [weak self] _ in self?.removeListener(id) }
        return stream
    }

    private func removeListener(_ id: Int) {
        lock.lock()
        listeners.removeValue(forKey: id)
        lock.unlock()
    }
}
