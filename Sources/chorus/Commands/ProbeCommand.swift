import ArgumentParser
import ChorusAudio
import ChorusCommandLine
import Foundation

struct ProbeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "probe",
        abstract: "Show an audio file's container, codec, rate, channels, bit rate and exact duration.",
        discussion: """
            The duration is measured by decoding: encoder delay and padding are excluded, so it equals \
            the number of samples FFmpeg decodes.

            Example:
              chorus probe samples/clips/sarah-1.mp3 --json
            """)

    @Argument(help: "The audio file.")
    var file: String

    @Flag(help: "Print JSON.")
    var json = false

    func run() async throws {
        try await reportingErrors {
            var result = try AudioProbe.probe(URL(fileURLWithPath: file))
            result.path = file
            if json {
                print(String(decoding: result.jsonData(), as: UTF8.self), terminator: "")
            } else {
                let stream = result.stream
                let layout = stream.channels == 1 ? "mono" : stream.channels == 2 ? "stereo" : "\(stream.channels) channels"
                print("file:        \(result.path)")
                print("container:   \(stream.container) (\(stream.containerDescription))")
                print("codec:       \(stream.codec) (\(stream.codecDescription))")
                print("sample rate: \(stream.sampleRate) Hz")
                print("channels:    \(stream.channels) (\(layout))")
                print("bit rate:    " + (stream.bitRate.map { "\($0 / 1000) kbit/s" } ?? "unknown"))
                print(String(format: "duration:    %.6f s (%d samples)", result.duration, result.samples))
            }
        }
    }
}
