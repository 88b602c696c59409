import ChorusSupport

/// CPU time per stage, in seconds: each stage's work is timed on the thread's own CPU clock (so a stage
/// that waits for a core is not charged for it), and values from parallel workers add up. Decode and resample
/// are the exception: timed per packet, they use the monotonic clock, which costs a tenth as much to read.
public struct StageTimings: Sendable, Codable {
    public private(set) var seconds: [Stage: Double] = [:]

    public init() {}

    public subscript(stage: Stage) -> Double { seconds[stage, default: 0] }

    mutating func add(_ stage: Stage, _ value: Double) { seconds[stage, default: 0] += value }

    mutating func merge(_ other: StageTimings) {
        for (stage, value) in other.seconds { seconds[stage, default: 0] += value }
    }

    /// Runs `body` (synchronous, so on one thread), adding the CPU time it took to `stage`.
    @inline(__always)
    mutating func measure<T>(_ stage: Stage, _ body: () throws -> T) rethrows -> T {
        let start = MonotonicClock.threadCPU
        defer { add(stage, MonotonicClock.threadCPU - start) }
        return try body()
    }
}
