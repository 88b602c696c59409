import Foundation

/// Values handed to every listener, from the first: a listener that joins late first hears everything kept so far,
/// then each value as it comes, then the end (or the failure). What a render's listeners share: its encoded audio
/// (`?stream=true`) and its events (server-sent events, waiting requests). It keeps what it is told to keep until it
/// is released with its render, so it is bounded by the render's own output.
final class Broadcast<Element: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var kept: [Element] = []
    /// The values sent at the end, and the failure, once it has ended.
    private var end: (last: [Element], failure: (any Error)?)?
    private var listeners: [Int: AsyncThrowingStream<Element, any Error>.Continuation] = [:]
    private var nextListener = 0

    /// Sends `value` to every listener; `keep` also hands it to those who join later.
    func send(_ value: Element, keep: Bool = true) {
        lock.lock()
        guard end == nil else { return lock.unlock() }
        if keep { kept.append(value) }
        let current = Array(listeners.values)
        lock.unlock()
        for listener in current { listener.yield(value) }
    }

    /// Ends it: every listener, now or later, hears `last` after what was kept, then the end, or `failure`.
    func finish(last: [Element] = [], throwing failure: (any Error)? = nil) {
        lock.lock()
        guard end == nil else { return lock.unlock() }
        end = (last, failure)
        let current = Array(listeners.values)
        listeners.removeAll()
        lock.unlock()
        for listener in current {
            last.forEach { listener.yield($0) }
            listener.finish(throwing: failure)
        }
    }

    /// `first` (this listener's own start, e.g. the state now), everything kept, then each value as it comes, then the end.
    func listen(first: [Element] = []) -> AsyncThrowingStream<Element, any Error> {
        let (stream, continuation) = AsyncThrowingStream.makeStream(of: Element.self)
        lock.lock()
        first.forEach { continuation.yield($0) }
        kept.forEach { continuation.yield($0) }
        if let end {
            lock.unlock()
            end.last.forEach { continuation.yield($0) }
            continuation.finish(throwing: end.failure)
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
