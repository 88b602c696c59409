public import Foundation

/// Encoded audio as it is produced, for HTTP streaming: MP3 frames and Ogg pages arrive as soon as
/// each message is encoded, so a listener hears the first message before the last one exists.
///
/// Iterate it once. A streamed MP3 is exactly the stored file without its first frame: the
/// LAME/Xing tag (gapless delay/padding and seek table) can only be written after the end, so it
/// is kept by files and in-memory outputs and left out of the stream.
///
/// With a `bufferLimit`, the encoder waits while that many bytes are unread (backpressure); without
/// one, unread bytes accumulate (at most the whole output). A consumer that stops iterating, or
/// calls `cancel()`, makes later chunks be dropped: the render itself goes on.
///
/// ```swift
/// let stream = AudioChunkStream()
/// var outputs = RenderOutputs(format: .mp3)
/// outputs.stream = stream
/// // start the render, then:
/// for try await chunk in stream { send(chunk) }
/// ```
public final class AudioChunkStream: AsyncSequence, @unchecked Sendable {
    public typealias Element = Data

    /// Unread bytes that make the producer wait, or `nil` for no limit.
    public let bufferLimit: Int?
    private let condition = NSCondition()
    private var chunks: [Data] = []
    private var buffered = 0
    private var waiter: CheckedContinuation<Data?, any Error>?
    private var ended = false
    private var failure: (any Error)?
    private var cancelled = false
    private var iterated = false
    /// Bytes handed to the consumer so far.
    public private(set) var bytesDelivered = 0

    public init(bufferLimit: Int? = nil) {
        self.bufferLimit = bufferLimit
    }

    // MARK: Producer (the encoder)

    /// Adds a chunk; waits while the buffer is over its limit. Dropped after `cancel()`.
    package func write(_ data: Data) {
        guard !data.isEmpty else { return }
        condition.lock()
        if cancelled || ended {
            condition.unlock()
            return
        }
        if let waiter {
            self.waiter = nil
            bytesDelivered += data.count
            condition.unlock()
            waiter.resume(returning: data)
            return
        }
        chunks.append(data)
        buffered += data.count
        if let bufferLimit {
            while buffered > bufferLimit && !cancelled { condition.wait() }
        }
        condition.unlock()
    }

    /// Ends the stream: normally (`nil`) or with the render's error.
    package func finish(throwing error: (any Error)? = nil) {
        condition.lock()
        guard !ended else {
            condition.unlock()
            return
        }
        ended = true
        failure = error
        let waiter = self.waiter
        self.waiter = nil
        condition.broadcast()
        condition.unlock()
        if let waiter {
            if let error { waiter.resume(throwing: error) } else { waiter.resume(returning: nil) }
        }
    }

    // MARK: Consumer

    /// Stops listening: buffered and later chunks are dropped, and a waiting encoder goes on.
    public func cancel() {
        condition.lock()
        cancelled = true
        chunks.removeAll()
        buffered = 0
        let waiter = self.waiter
        self.waiter = nil
        condition.broadcast()
        condition.unlock()
        waiter?.resume(returning: nil)
    }

    func next() async throws -> Data? {
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Data?, any Error>) in
                condition.lock()
                if !chunks.isEmpty {
                    let chunk = chunks.removeFirst()
                    buffered -= chunk.count
                    bytesDelivered += chunk.count
                    condition.broadcast()
                    condition.unlock()
                    continuation.resume(returning: chunk)
                } else if cancelled {
                    condition.unlock()
                    continuation.resume(returning: nil)
                } else if ended {
                    let failure = self.failure
                    condition.unlock()
                    if let failure { continuation.resume(throwing: failure) } else { continuation.resume(returning: nil) }
                } else {
                    waiter = continuation
                    condition.unlock()
                }
            }
        } onCancel: {
            cancel()
        }
    }

    public struct AsyncIterator: AsyncIteratorProtocol {
        let stream: AudioChunkStream
        public mutating func next() async throws -> Data? { try await stream.next() }
    }

    /// - Precondition: called once; a second iteration sees nothing.
    public func makeAsyncIterator() -> AsyncIterator {
        condition.lock()
        if iterated { cancelled = true }
        iterated = true
        condition.unlock()
        return AsyncIterator(stream: self)
    }
}
