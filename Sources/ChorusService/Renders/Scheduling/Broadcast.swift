import ChorusSupport
import ChorusWire
import Foundation

/// Values handed to every listener, from the first: a listener that joins late first hears everything kept so far,
/// then each value as it comes, then the end (or the failure). What a render's listeners share: its encoded audio
/// (`?stream=true`) and its events (server-sent events, waiting requests). It keeps what it is told to keep until it
/// is released with its render, so it is bounded by the render's own output.
final class Broadcast<Element: Sendable>: Sendable {
    private typealias Listener = AsyncThrowingStream<Element, any Error>.Continuation
    /// The values sent at the end, and the failure.
    private typealias End = (last: [Element], failure: (any Error)?)
    private struct State {
        var kept: [Element] = []
        /// Set once it has ended.
        var end: End?
        var listeners: [Int: Listener] = [:]
        var nextListener = 0
    }
    private let state = Locked(State())

    /// Sends `value` to every listener; `keep` also hands it to those who join later.
    func send(_ value: Element, keep: Bool = true) {
        let current = state.withLock { state -> [Listener] in
            guard state.end == nil else { return [] }
            if keep { state.kept.append(value) }
            return Array(state.listeners.values)
        }
        for listener in current { listener.yield(value) }
    }

    /// Ends it: every listener, now or later, hears `last` after what was kept, then the end, or `failure`.
    func finish(last: [Element] = [], throwing failure: (any Error)? = nil) {
        let current = state.withLock { state -> [Listener] in
            guard state.end == nil else { return [] }
            state.end = (last, failure)
            let current = Array(state.listeners.values)
            state.listeners.removeAll()
            return current
        }
        for listener in current {
            last.forEach { listener.yield($0) }
            listener.finish(throwing: failure)
        }
    }

    /// `first` (this listener's own start, e.g. the state now), everything kept, then each value as it comes, then the end.
    func listen(first: [Element] = []) -> AsyncThrowingStream<Element, any Error> {
        let (stream, continuation) = AsyncThrowingStream.makeStream(of: Element.self)
        var id = 0
        let ended = state.withLock { state -> End? in
            first.forEach { continuation.yield($0) }
            state.kept.forEach { continuation.yield($0) }
            if let end = state.end { return end }
            id = state.nextListener
            state.nextListener += 1
            state.listeners[id] = continuation
            return nil
        }
        if let ended {
            ended.last.forEach { continuation.yield($0) }
            continuation.finish(throwing: ended.failure)
            return stream
        }
        continuation.onTermination = { [weak self, id] _ in self?.removeListener(id) }
        return stream
    }

    private func removeListener(_ id: Int) {
        state.withLock { _ = $0.listeners.removeValue(forKey: id) }
    }
}
