import Foundation

/// Seconds on a monotonic clock, for stage timings and wall times.
package enum MonotonicClock {
    package static var now: Double {
        var spec = timespec()
        clock_gettime(CLOCK_MONOTONIC, &spec)
        return Double(spec.tv_sec) + Double(spec.tv_nsec) / 1e9
    }

    /// Seconds of CPU the calling thread has used: what a stage costs, whatever else shares the cores.
    package static var threadCPU: Double {
        var spec = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &spec)
        return Double(spec.tv_sec) + Double(spec.tv_nsec) / 1e9
    }
}
