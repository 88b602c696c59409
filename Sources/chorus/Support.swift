import ArgumentParser
import ChorusAudio
import Foundation

/// Runs a command body, turning any failure into one line on stderr and exit status 1.
func reportingErrors<T>(_ body: () async throws -> T) async throws -> T {
    do {
        return try await body()
    } catch let error as ExitCode {
        throw error
    } catch let error as ValidationError {
        throw error
    } catch is CancellationError {
        Terminal.error("cancelled")
        throw ExitCode(130)
    } catch let error as AudioError where error.code == .invalidArgument && FlagNames.byField[error.subject] != nil {
        Terminal.error("\(FlagNames.byField[error.subject]!)\(error.value.map { " \($0)" } ?? ""): \(error.reason)")
        throw ExitCode(64)
    } catch {
        Terminal.error(String(describing: error))
        throw ExitCode.failure
    }
}

enum Terminal {
    static let isInteractive = isatty(STDERR_FILENO) == 1

    static func error(_ message: String) {
        FileHandle.standardError.write(Data("chorus: error: \(message)\n".utf8))
    }

    static func warning(_ message: String) {
        FileHandle.standardError.write(Data("chorus: warning: \(message)\n".utf8))
    }

    /// Rewrites the current stderr line (terminals only).
    static func status(_ message: String) {
        guard isInteractive else { return }
        FileHandle.standardError.write(Data("\r\u{1B}[2K\(message)".utf8))
    }

    static func endStatus() {
        guard isInteractive else { return }
        FileHandle.standardError.write(Data("\r\u{1B}[2K".utf8))
    }
}

/// `128k`, `128K`, `128kbps`, `96000`, or a bare number under 1000 taken as kbit/s.
struct BitRate: ExpressibleByArgument {
    var bitsPerSecond: Int

    init(bitsPerSecond: Int) { self.bitsPerSecond = bitsPerSecond }

    init?(argument: String) {
        var text = argument.lowercased()
        if text.hasSuffix("bps") { text.removeLast(3) }
        var multiplier = 1
        if text.hasSuffix("k") {
            text.removeLast()
            multiplier = 1000
        }
        guard let value = Int(text), value > 0 else { return nil }
        bitsPerSecond = multiplier == 1000 || value < 1000 ? value * 1000 : value
    }

    var defaultValueDescription: String { "\(bitsPerSecond / 1000)k" }
}

/// Waveform zoom and resolution options shared by `render` and `waveform`; ranges and defaults from `WaveformOptions`.
struct WaveformArguments: ParsableArguments {
    @Option(
        name: .customLong("samples-per-pixel"), parsing: .unconditional,
        help:
            "Audio frames per waveform point (audiowaveform --zoom; minimum \(WaveformOptions.minimumSamplesPerPixel)). Default \(WaveformOptions.defaultSamplesPerPixel)."
    )
    var samplesPerPixel: Int?

    @Option(
        name: .customLong("pixels-per-second"), parsing: .unconditional,
        help: "Waveform points per second (samples per pixel = sample rate / N).")
    var pixelsPerSecond: Int?

    @Option(parsing: .unconditional, help: "Waveform resolution: 8 or 16 bits (peaks.js reads 8-bit only).")
    var bits: Int = WaveformOptions.defaultBits

    func validate() throws {
        if samplesPerPixel != nil && pixelsPerSecond != nil {
            throw ValidationError("use either --samples-per-pixel or --pixels-per-second, not both")
        }
        // The sample rate is not known yet; a zoom too fine for it is reported when the file is read.
        try FlagNames.validating { try options.validate(sampleRate: RenderOptions.sampleRateRange.upperBound) }
    }

    var options: WaveformOptions {
        let zoom: WaveformZoom =
            pixelsPerSecond.map { .pixelsPerSecond($0) } ?? .samplesPerPixel(samplesPerPixel ?? WaveformOptions.defaultSamplesPerPixel)
        return WaveformOptions(zoom: zoom, bits: bits)
    }
}

func formatDuration(_ seconds: Double) -> String {
    let total = Int(seconds)
    let fraction = String(format: "%.1f", seconds - Double(total)).dropFirst()
    if total >= 3600 { return String(format: "%d:%02d:%02d", total / 3600, total / 60 % 60, total % 60) + fraction }
    return String(format: "%d:%02d", total / 60, total % 60) + fraction
}
