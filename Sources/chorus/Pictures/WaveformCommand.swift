import ArgumentParser
import ChorusAudio
import ChorusCommandLine
import Foundation

struct WaveformCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "waveform",
        abstract: "Compute audiowaveform-compatible peaks (.json or .dat) of any audio file.",
        discussion: """
            Peaks are min/max pairs over each block of samples, channels averaged, exactly as BBC audiowaveform \
            computes them; peaks.js, waveform-data.js and wavesurfer.js read the files unchanged.

            Example:
              chorus waveform samples/clips/sarah-1.mp3 -o sarah-1.dat --pixels-per-second 100 --bits 8
            """)

    @Argument(help: "The audio file.")
    var file: String

    @Option(name: [.short, .customLong("output")], help: "Output file: .json or .dat.")
    var output: String

    @OptionGroup(title: "Waveform")
    var waveform: WaveformArguments

    func validate() throws {
        guard (try? WaveformFileFormat(url: URL(fileURLWithPath: output))) != nil else {
            throw ValidationError("--output \(output): use a .json or .dat file name")
        }
    }

    func run() async throws {
        try await reportingErrors {
            let options = waveform.options
            let destination = try AtomicOutput(destination: URL(fileURLWithPath: output))
            defer { destination.discard() }
            let peaks = try WaveformPeaks.compute(fileAt: URL(fileURLWithPath: file), zoom: options.zoom)
            try destination.write(peaks.data(try WaveformFileFormat(url: destination.destination), bits: options.bits))
            try destination.commit()
        }
    }
}
