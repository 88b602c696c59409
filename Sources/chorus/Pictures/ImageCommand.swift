import ArgumentParser
import ChorusAudio
import ChorusCommandLine
import ChorusPictures
import ChorusWire
import Foundation

struct ImageCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "image",
        abstract: "Draw a waveform picture (.png or .svg): speakers in their own colours, a time axis and a legend.",
        discussion: """
            The waveform is min/max per pixel column, the same peaks as `chorus waveform`. With --timeline (a render's \
            timeline JSON) each speaker's messages take a colour from a palette that stays distinguishable for \
            colour-blind viewers and the gaps are grey; without one the waveform is one colour.

            Example:
              chorus image family-chat.mp3 --timeline family-chat.timeline.json -o family-chat.png
            """)

    @Argument(help: "The audio file (a render's output, or any audio).")
    var audio: String

    @Option(name: [.short, .customLong("output")], help: "Output picture: .png or .svg.")
    var output: String

    @Option(help: "The render's timeline JSON, for speaker colours and the legend.")
    var timeline: String?

    @Option(parsing: .unconditional, help: "Width in pixels (one waveform point per pixel column).")
    var width = WaveformPicture.Options().width

    @Option(parsing: .unconditional, help: "Height in pixels.")
    var height = WaveformPicture.Options().height

    @Option(help: "light or dark.")
    var theme = "light"

    func validate() throws {
        guard ["png", "svg"].contains(URL(fileURLWithPath: output).pathExtension.lowercased()) else {
            throw ValidationError("--output \(output): use a .png or .svg file name")
        }
        guard PictureTheme.named(theme) != nil else { throw ValidationError("--theme \(theme): use light or dark") }
        try FlagNames.validating { try options.validate() }
    }

    var options: WaveformPicture.Options {
        WaveformPicture.Options(width: width, height: height, theme: PictureTheme.named(theme) ?? .light)
    }

    func run() async throws {
        try await reportingErrors {
            let timeline = try self.timeline.map { path -> Timeline in
                do {
                    return try JSONDecoder().decode(Timeline.self, from: Data(contentsOf: URL(fileURLWithPath: path)))
                } catch {
                    throw AudioError(.unreadable, subject: path, reason: "is not a timeline JSON file")
                }
            }
            let picture = try WaveformPicture.make(audio: URL(fileURLWithPath: audio), timeline: timeline, options: options)
            let destination = try AtomicOutput(destination: URL(fileURLWithPath: output))
            defer { destination.discard() }
            let isSVG = destination.destination.pathExtension.lowercased() == "svg"
            try destination.write(isSVG ? Data(picture.svg().utf8) : picture.png())
            try destination.commit()
        }
    }
}
