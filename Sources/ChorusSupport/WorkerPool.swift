import Foundation

/// A fixed set of threads for CPU-heavy audio work (decode, normalize, encode), so it never runs
/// on Swift's cooperative pool or an event loop, where it would starve the server and HTTP
/// clients' deadlines. Callers are bounded by their own windows; the queue is FIFO, but for urgent jobs (what a
/// listener is waiting for), which go before the jobs not urgent — all but every `urgentRun`-th job taken, which is the
/// oldest job not urgent, so a steady stream of urgent work never stops the rest — and background jobs (work nobody
/// waits for soon: a voice being made), taken only when no other job waits.
///
/// ```swift
/// let pool = WorkerPool(threads: 2)
/// let peaks = try await pool.run { try WaveformPeaks.compute(fileAt: url, zoom: .samplesPerPixel(256)) }
/// ```
package final class WorkerPool: Sendable {
    package let threadCount: Int
    private let queue: JobQueue

    /// Starts `threads` threads (at least 1) that live as long as the pool.
    package init(threads: Int, name: String = "chorus-audio") {
        threadCount = max(1, threads)
        queue = JobQueue()
        for index in 0..<threadCount {
            let threadName = threadCount == 1 ? name : "\(name)-\(index)"
            let thread = Thread { [queue] in
                // Named for the process's account of its threads (`ThreadBudget`): what `ps -L` and /proc show.
                ThreadBudget.nameThread(threadName)
                // Signals belong to the process's handlers (e.g. the CLI's Ctrl-C cleanup), never to a worker.
                var all = sigset_t()
                sigfillset(&all)
                pthread_sigmask(SIG_BLOCK, &all, nil)
                queue.work()
            }
            thread.stackSize = 8 << 20
            thread.start()
        }
    }

    deinit { queue.stop() }

    /// Runs `body` on a pool thread and returns its result; `urgent`, before the jobs waiting that are not;
    /// `background`, after every other job waiting. A task cancelled before its turn comes throws `CancellationError`
    /// without running `body`.
    package func run<T: Sendable>(
        urgent: Bool = false, background: Bool = false, _ body: @escaping @Sendable () throws -> T
    ) async throws -> T {
        try Task.checkCancellation()
        let cancelled = CancelFlag()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
                queue.enqueue(urgent: urgent, background: background && !urgent) {
                    if cancelled.isSet {
                        continuation.resume(throwing: CancellationError())
                    } else {
                        continuation.resume(with: Result { try body() })
                    }
                }
            }
        } onCancel: {
            cancelled.set()
        }
    }

    /// Jobs waiting for a thread.
    package var waiting: Int { queue.count }
}

/// A thread-safe one-way flag.
final class CancelFlag: Sendable {
    private let flag = Locked(false)
    var isSet: Bool { flag.value }
    func set() { flag.withLock { $0 = true } }
}

/// The FIFO behind `WorkerPool`, and the urgent jobs' FIFO before it.
private final class JobQueue: @unchecked Sendable {
    /// At most this many urgent jobs are taken in a row while others wait (`WorkerPool`).
    static let urgentRun = 4
    private let condition = NSCondition()
    private var urgent: [() -> Void] = []
    /// Urgent jobs taken in a row while others waited.
    private var urgentInARow = 0
    private var jobs: [() -> Void] = []
    private var head = 0
    /// Jobs taken only when no other job waits.
    private var background: [() -> Void] = []
    private var stopped = false
    private static let taken: @Sendable () -> Void = {}

    var count: Int {
        condition.lock()
        defer { condition.unlock() }
        return urgent.count + jobs.count - head + background.count
    }

    func enqueue(urgent isUrgent: Bool, background isBackground: Bool = false, _ job: @escaping () -> Void) {
        condition.lock()
        if isUrgent {
            urgent.append(job)
        } else if isBackground {
            background.append(job)
        } else {
            jobs.append(job)
        }
        condition.signal()
        condition.unlock()
    }

    func stop() {
        condition.lock()
        stopped = true
        condition.broadcast()
        condition.unlock()
    }

    func work() {
        while true {
            condition.lock()
            while urgent.isEmpty && head == jobs.count && background.isEmpty && !stopped { condition.wait() }
            if !urgent.isEmpty && (urgentInARow < Self.urgentRun || head == jobs.count) {
                let job = urgent.removeFirst()  // a few at most: what listeners wait for
                urgentInARow = head == jobs.count ? 0 : urgentInARow + 1
                condition.unlock()
                job()
                continue
            }
            urgentInARow = 0
            if head == jobs.count {
                guard !background.isEmpty, !stopped else {
                    condition.unlock()
                    return
                }
                let job = background.removeFirst()  // a generation of a voice being made at most
                condition.unlock()
                job()
                continue
            }
            let job = jobs[head]
            // The slot lets go of the job at once: a job holds what its body captured (a message's
            // audio), which must not live on until the array is compacted.
            jobs[head] = Self.taken
            head += 1
            if head == jobs.count {
                jobs.removeAll(keepingCapacity: true)
                head = 0
            } else if head > 1024 && head * 2 > jobs.count {
                jobs.removeFirst(head)
                head = 0
            }
            condition.unlock()
            job()
        }
    }
}
