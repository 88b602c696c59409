import ArgumentParser
import ChorusCommandLine
import ChorusSpeech
import ChorusVoiceMaking
import Foundation

struct VoicesCreateCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "create",
        abstract: "Make a Kokoro voice like a person's from recordings of them, offline; usable at once as kokoro:NAME.",
        discussion: """
            Make voices only from recordings of people who agreed to it. 30 s to 10 minutes of one person speaking \
            (any format Chorus decodes; at least 10 s) give a voice the speaker model hears as them: Chorus searches \
            Kokoro's styles, hearing each candidate speak, for about seven minutes on two cores (--candidates sets \
            how many). The voice is written into the Kokoro voices folder with NAME.made.json beside it: what it was \
            made from (file digests, durations, models, scores), never the recordings. The same recordings and \
            --seed give the same voice. Ctrl-C stops it and leaves no voice behind.

            Example:
              chorus voices create mom --from mom-1.m4a --from mom-2.ogg --hint female
            """)

    @Argument(help: "The voice's name: letters, digits, _ and -, starting with a letter (kokoro:NAME).")
    var name: String

    @Option(name: .customLong("from"), help: "A recording of the person (repeat for more; up to 16).")
    var recordings: [String] = []

    @Option(
        name: .customLong("person"),
        help:
            "One person's recordings, comma-separated; repeat for several people: the voice is aimed at what they share (a voice like none of them).")
    var people: [String] = []

    @Option(help: "female or male: what the voice should sound like (by the person's pitch unless told).")
    var hint: String?

    @Option(help: "The search's seed: the same recordings and seed give the same voice.")
    var seed: UInt64 = 1

    @Option(help: "Candidate voices to hear (\(VoiceMaker.leastCandidates)–\(VoiceMaker.mostCandidates)).")
    var candidates = VoiceMaker.defaultCandidates

    @Flag(help: "Print the voice's record as JSON.")
    var json = false

    func validate() throws {
        guard recordings.isEmpty != people.isEmpty else {
            throw ValidationError("give the recordings of one person with --from, or of several people with --person (not both)")
        }
        if let hint, VoiceSound(rawValue: hint.lowercased()) == nil { throw ValidationError("--hint \(hint): use female or male") }
        guard (VoiceMaker.leastCandidates...VoiceMaker.mostCandidates).contains(candidates) else {
            throw ValidationError("--candidates \(candidates): use \(VoiceMaker.leastCandidates) to \(VoiceMaker.mostCandidates)")
        }
    }

    func run() async throws {
        try await reportingErrors {
            let options = VoiceMaker.Options(seed: seed, candidates: candidates, hint: hint.flatMap { VoiceSound(rawValue: $0.lowercased()) })
            let groups =
                people.isEmpty
                ? [recordings] : people.map { $0.split(separator: ",", omittingEmptySubsequences: true).map(String.init) }
            let record = try await VoiceMaker().make(name: name, people: groups.map { $0.map { URL(fileURLWithPath: $0) } }, options: options) {
                progress in
                let width = 30
                let filled = progress.total > 0 ? min(width, width * progress.done / progress.total) : 0
                Terminal.status(
                    "making \(name) [\(String(repeating: "#", count: filled))\(String(repeating: ".", count: width - filled))] "
                        + "\(progress.done)/\(progress.total) candidates, similarity \(String(format: "%.3f", progress.best))")
            }
            Terminal.endStatus()
            if json {
                let encoder = JSONEncoder()
                encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
                print(String(decoding: try encoder.encode(record), as: UTF8.self))
            } else {
                print("kokoro:\(name)  \(record.summary); made in \(Int(record.seconds.rounded())) s")
            }
        }
    }
}

struct VoicesRemoveCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "remove", abstract: "Remove a voice made with `chorus voices create` (its style and its record).")

    @Argument(help: "The made voice's name.")
    var name: String

    func run() async throws {
        try await reportingErrors {
            try MadeVoices.remove(name: name, in: KokoroModel.voicesFolder())
            print("removed kokoro:\(name)")
        }
    }
}
