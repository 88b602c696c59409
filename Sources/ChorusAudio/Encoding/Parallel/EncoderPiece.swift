import ChorusSupport
import ChorusWire
import Dispatch
import Foundation

/// One stretch of a `ParallelEncoder`'s stream with its own encoder, fed on its own serial queue.
/// Everything but `encode`/`encodeSilence`/`finish` (called by the owner, in order) happens on the
/// queue; the owner reads the results after `done`.
final class EncoderPiece<Codec: PieceCodec>: @unchecked Sendable {
    let index: Int
    /// First frame of the stream this piece's part begins at (on the frame grid).
    let start: Int
    /// First frame of the stream its encoder was given: `start`, or earlier by an overlapped cut's pre-roll.
    let encoderStart: Int
    /// The next piece's `start`, set when this piece is finished; nil for the last piece.
    private(set) var end: Int?
    let done = DispatchSemaphore(value: 0)
    private(set) var isFinishing = false
    // Written on the queue before `done` is signalled; read by the owner after.
    private var encoded: Codec.Encoded?
    private var error: (any Error)?
    private(set) var cpuSeconds = 0.0
    /// The piece's first failure as soon as it happens, for the owner to stop early (`error` is the queue's own copy).
    private let reportedFailure = Locked<(any Error)?>(nil)

    private let queue: DispatchQueue
    private let codec: Codec
    private let channels: Int

    init(index: Int, start: Int, encoderStart: Int? = nil, codec: Codec, channels: Int) {
        self.index = index
        self.start = start
        self.encoderStart = encoderStart ?? start
        self.codec = codec
        self.channels = channels
        queue = DispatchQueue(label: "chorus-encoder-piece-\(index)", qos: .userInitiated)
    }

    /// The piece's failure, if it has failed yet (read at any time by the owner).
    var failure: (any Error)? { reportedFailure.value }

    /// What the piece encoded, once `done` has been signalled; the first failure otherwise.
    func result() throws -> Codec.Encoded {
        if let error { throw error }
        guard let encoded else { preconditionFailure("piece \(index) read before it finished") }
        return encoded
    }

    func encode(_ samples: [Float], queued: DispatchSemaphore) {
        queued.wait()
        queue.async { [self] in
            defer { queued.signal() }
            samples.withUnsafeBufferPointer { run($0) }
        }
    }

    func encodeSilence(frames: Int, queued: DispatchSemaphore) {
        guard frames > 0 else { return }
        queued.wait()
        queue.async { [self] in
            defer { queued.signal() }
            var left = frames
            pieceSilence.withUnsafeBufferPointer { zeros in
                while left > 0 {
                    let count = min(left, zeros.count / channels)
                    run(UnsafeBufferPointer(rebasing: zeros[0..<(count * channels)]))
                    left -= count
                }
            }
        }
    }

    var span: PieceSpan { PieceSpan(index: index, encoderStart: encoderStart, start: start, end: end) }

    /// Flushes; the piece's part of the stream ends at `end` (the next piece's start; nil for the last piece).
    func finish(end: Int?) {
        isFinishing = true
        self.end = end
        queue.async { [self] in
            defer { done.signal() }
            guard error == nil else { return }
            timed {
                do {
                    encoded = try codec.finish()
                } catch {
                    fail(error)
                }
            }
        }
    }

    private func run(_ samples: UnsafeBufferPointer<Float>) {
        guard error == nil else { return }
        timed {
            do {
                try codec.encode(samples)
            } catch {
                fail(error)
            }
        }
    }

    private func fail(_ error: any Error) {
        self.error = error
        reportedFailure.withLock { $0 = error }
    }

    private func timed(_ body: () -> Void) {
        let started = MonotonicClock.threadCPU
        body()
        cpuSeconds += MonotonicClock.threadCPU - started
    }
}

/// Zeros fed to a piece for the silence held back before a cut.
private let pieceSilence = [Float](repeating: 0, count: 8192 * 2)
