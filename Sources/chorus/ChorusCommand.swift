import ArgumentParser
import ChorusAudio
import ChorusCommandLine
import ChorusSupport
import Dispatch
import Foundation

@main
struct ChorusCommand: AsyncParsableCommand {
    static func main() async {
        do {
            var command = try parseAsRoot()
            // `serve` shuts down gracefully through swift-service-lifecycle; the other commands remove their
            // half-written outputs and exit at once.
            if !(command is ServeCommand) { Interruption.install() }
            if var asyncCommand = command as? any AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch {
            exit(withError: error)
        }
    }

    static let configuration = CommandConfiguration(
        commandName: "chorus",
        abstract: "Stitch conversations into one normalized audio file, with timeline, waveform peaks and captions.",
        discussion: """
            Exit status: 0 on success, 1 when an input or output fails (the message names it), \
            64 for invalid command-line usage.
            """,
        version: ChorusVersion.current,
        subcommands: [
            RenderCommand.self, SpeakCommand.self, TranscribeCommand.self, AlignCommand.self, VoicesCommand.self, ProbeCommand.self,
            WaveformCommand.self, ImageCommand.self, PlayerCommand.self,
            ServeCommand.self,
        ])
}

/// On Ctrl-C or SIGTERM: remove half-written outputs, then exit 130 / 143.
enum Interruption {
    nonisolated(unsafe) static var sources: [any DispatchSourceSignal] = []

    static func install() {
        for signalNumber in [SIGINT, SIGTERM] {
            signal(signalNumber, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: signalNumber, queue: .global())
            source.setEventHandler {
                AtomicOutput.discardAllPending()
                Terminal.endStatus()
                FileHandle.standardError.write(Data("chorus: interrupted; no output was written\n".utf8))
                exit(128 + signalNumber)
            }
            source.resume()
            sources.append(source)
        }
    }
}
