import ArgumentParser

@main
struct Chorus: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "chorus",
        abstract: "Stitch conversations into one normalized audio file, with timeline, waveform peaks and captions.",
        discussion: """
            Exit status: 0 on success, 1 when an input or output fails (the message names it), \
            64 for invalid command-line usage.
            """,
        version: "0.1.0",
        subcommands: [RenderCommand.self, SpeakCommand.self, VoicesCommand.self, ProbeCommand.self, WaveformCommand.self, BenchCommand.self])
}
