public import ChorusAudio

/// One render, as an `AsyncSequence` of `RenderEvent`s ending with `.finished`, or as one call.
///
/// ```swift
/// let job = chorus.render(conversation, to: outputs)
/// for try await event in job {
///     switch event {
///     case .progress(let progress): print("\(progress.rendered)/\(progress.total)")
///     case .segment(let segment): print(segment.speaker, segment.startSample)
///     case .warning(let text): print("warning:", text)
///     case .finished(let result): print(result.timeline.duration)
///     }
/// }
/// let result = try await chorus.render(conversation, to: outputs).result()   // or just the outcome
/// ```
public struct RenderRun: AsyncSequence, Sendable {
    public typealias Element = RenderEvent
    let pipeline: RenderPipeline

    /// Runs the render in the calling task, handing every event to `onEvent` as it happens.
    /// Cancelling the calling task cancels the render; by the time this returns or throws, no
    /// temporary file is left.
    public func result(onEvent: (@Sendable (RenderEvent) -> Void)? = nil) async throws -> RenderResult {
        let result = try await pipeline.run { onEvent?($0) }
        onEvent?(.finished(result))
        return result
    }

    public struct AsyncIterator: AsyncIteratorProtocol {
        var base: AsyncThrowingStream<RenderEvent, any Error>.AsyncIterator
        public mutating func next() async throws -> RenderEvent? { try await base.next() }
    }

    /// Starts the render in a task of its own; events are buffered until read. Ending the iteration
    /// early (or cancelling the iterating task) cancels the render.
    public func makeAsyncIterator() -> AsyncIterator {
        let (stream, continuation) = AsyncThrowingStream.makeStream(of: RenderEvent.self)
        let pipeline = self.pipeline
        let task = Task {
            do {
                let result = try await pipeline.run { continuation.yield($0) }
                continuation.yield(.finished(result))
                continuation.finish()
            } catch {
                continuation.finish(throwing: error)
            }
        }
        continuation.onTermination = { _ in task.cancel() }
        return AsyncIterator(base: stream.makeAsyncIterator())
    }
}
