/// Accumulated time per stage, in seconds. Values from parallel workers add up (CPU time per stage).
public struct StageTimings: Sendable, Codable {
    public private(set) var seconds: [Stage: Double] = [:]

    public init() {}

    public subscript(stage: Stage) -> Double { seconds[stage, default: 0] }

    mutating func add(_ stage: Stage, _ value: Double) { seconds[stage, default: 0] += value }

    mutating func merge(_ other: StageTimings) {
        for (stage, value) in other.seconds { seconds[stage, default: 0] += value }
    }

    /// Runs `body`, adding its duration to `stage`.
    @inline(__always)
    mutating func measure<T>(_ stage: Stage, _ body: () throws -> T) rethrows -> T {
        let start = MonotonicClock.now
        defer { add(stage, MonotonicClock.now - start) }
        return try body()
    }
}
