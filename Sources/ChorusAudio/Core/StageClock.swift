import Foundation

/// Processing stages whose time `chorus bench` reports.
public enum Stage: String, CaseIterable, Sendable, Codable {
    case decode, resample, trim, loudness, stitch, encode, waveform
}

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
        let start = Clock.now
        defer { add(stage, Clock.now - start) }
        return try body()
    }
}

/// A monotonic clock in seconds.
enum Clock {
    static var now: Double {
        var spec = timespec()
        clock_gettime(CLOCK_MONOTONIC, &spec)
        return Double(spec.tv_sec) + Double(spec.tv_nsec) / 1e9
    }
}
