import ArgumentParser
import ChorusAudio
import ChorusCommandLine
import ChorusPictures
import Foundation

struct PlayerCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "player",
        abstract: "Write one HTML page that plays a render: waveform in speaker colours, current speaker and word, transcript.",
        discussion: """
            Everything is inside the page (the audio as a data URL), so it plays when opened from any folder, \
            with no network. The speaker list jumps to a speaker's next message; space plays and pauses, \
            ←/→ move 5 s; speeds 1×, 1.25×, 1.5×, 2×.

            Example:
              chorus render samples/family-chat.json -o family-chat.mp3 --timeline family-chat.timeline.json
              chorus player family-chat.mp3 --timeline family-chat.timeline.json -o family-chat.html
            """)

    @Argument(help: "The render's audio (MP3, WAV, FLAC, AIFF, M4A or Ogg).")
    var audio: String

    @Option(help: "The render's timeline JSON (`chorus render --timeline`).")
    var timeline: String

    @Option(help: "Peaks from `chorus waveform` (.json or .dat); computed from the audio when left out.")
    var waveform: String?

    @Option(help: "The page's title (default: the audio file's name).")
    var title: String?

    @Option(name: [.short, .customLong("output")], help: "The page to write (.html).")
    var output: String

    func validate() throws {
        guard ["html", "htm"].contains(URL(fileURLWithPath: output).pathExtension.lowercased()) else {
            throw ValidationError("--output \(output): use an .html file name")
        }
    }

    func run() async throws {
        try await reportingErrors {
            let html = try PlayerPage.html(
                audioFile: URL(fileURLWithPath: audio), timelineFile: URL(fileURLWithPath: timeline),
                peaksFile: waveform.map { URL(fileURLWithPath: $0) }, title: title)
            let destination = try AtomicOutput(destination: URL(fileURLWithPath: output))
            defer { destination.discard() }
            try destination.write(Data(html.utf8))
            try destination.commit()
        }
    }
}
