import ArgumentParser
import ChorusAudio
import ChorusCommandLine
import Foundation

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
