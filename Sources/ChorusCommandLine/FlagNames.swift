import ArgumentParser
import ChorusAudio

/// The library names settings by their JSON field (`gap_ms`); the command line by its flags. This
/// is the one map between them, so a library range error becomes a usage error naming the flag.
package enum FlagNames {
    package static let byField: [String: String] = [
        "gap_ms": "--gap-ms", "sample_rate": "--sample-rate", "channels": "--channels", "loudness": "--loudness",
        "loudness_preset": "--loudness-preset",
        "bitrate": "--bitrate", "quality": "--quality", "jobs": "--jobs", "bits": "--bits",
        "samples_per_pixel": "--samples-per-pixel", "pixels_per_second": "--pixels-per-second",
        "concurrency": "--concurrency", "cache_max_mb": "--cache-max-mb", "width": "--width", "height": "--height",
    ]

    /// Runs `body`; an out-of-range setting becomes a `ValidationError` (exit 64) naming the flag.
    package static func validating(_ body: () throws -> Void) throws {
        do {
            try body()
        } catch let error as AudioError where error.code == .invalidArgument {
            guard let flag = byField[error.subject] else { throw ValidationError(error.description) }
            throw ValidationError("\(flag)\(error.value.map { " \($0)" } ?? ""): \(error.reason)")
        }
    }
}
