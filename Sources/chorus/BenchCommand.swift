import ArgumentParser
import ChorusAudio
import Foundation

struct BenchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "bench", abstract: "Measure render speed and memory.")
    func run() async throws {}
}
