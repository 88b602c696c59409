import ArgumentParser
import ChorusAudio
import ChorusVoices
import ChorusWire
import Foundation

struct TranscribeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "transcribe",
        abstract: "Transcribe recorded speech offline with Whisper, with each word's time.",
        discussion: """
            Reads any audio Chorus decodes (voice notes in M4A/AAC, Opus, MP3, WAV…). The model is found by name \
            in the models folder ($CHORUS_MODELS_DIR, else $XDG_DATA_HOME/chorus/models); scripts/setup.sh \
            installs \(WhisperModel.defaultName). Formats are those of OpenAI's transcription API: text, json \
            ({"text"}), verbose_json (language, duration, words and segments with times), srt and vtt (one \
            caption per segment).

            Example:
              chorus transcribe samples/clips/sarah-1.mp3 --format vtt -o sarah-1.vtt
            """)

    @Argument(help: "The audio file.")
    var file: String

    @Option(help: "text, json, verbose_json, srt or vtt.")
    var format: String = TranscriptionFormat.text.rawValue

    @Option(name: [.short, .customLong("output")], help: "Write to this file instead of standard output.")
    var output: String?

    @Option(help: "The model: a folder's name in the models folder.")
    var model: String = WhisperModel.defaultName

    @Option(help: "ONNX Runtime threads for the decode.")
    var threads: Int = 1

    func validate() throws {
        guard TranscriptionFormat(rawValue: format) != nil else {
            throw ValidationError("--format \(format): use \(TranscriptionFormat.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        guard (1...64).contains(threads) else { throw ValidationError("--threads \(threads): use 1 to 64") }
    }

    func run() async throws {
        try await reportingErrors {
            // The audio is decoded before the model is loaded (a second): a file that is not audio fails at once.
            let samples = try WhisperRecognizer.audio(fileAt: URL(fileURLWithPath: file))
            let recognizer = try WhisperRecognizer(model: try WhisperModel.named(model), threads: threads)
            let text = TranscriptionFormat(rawValue: format)!.render(try await recognizer.transcribe(samples).transcription)
            try Self.write(text, to: output)
        }
    }

    /// `text` to `output` (written whole or not at all), or to standard output.
    static func write(_ text: String, to output: String?) throws {
        if let output {
            let destination = try AtomicOutput(destination: URL(fileURLWithPath: output))
            defer { destination.discard() }
            try destination.write(Data(text.utf8))
            try destination.commit()
        } else {
            FileHandle.standardOutput.write(Data(text.utf8))
        }
    }
}

struct AlignCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "align",
        abstract: "Time every word of a known text on its recorded speech (a verse, a paragraph, an edited voice note).",
        discussion: """
            Each word of the text gets a time, once, in order, spelled as written, even where Whisper mishears \
            it; starts after pauses are sharpened against the audio. verbose_json has the words and the sentences \
            (as segments); srt and vtt have one caption per sentence.

            Example:
              chorus align samples/clips/marcus-1.m4a --text marcus-1.txt --format vtt -o marcus-1.vtt
            """)

    @Argument(help: "The audio file.")
    var file: String

    @Option(help: "A UTF-8 text file: the words spoken in the audio.")
    var text: String

    @Option(help: "verbose_json, srt or vtt.")
    var format: String = TranscriptionFormat.verboseJSON.rawValue

    @Option(name: [.short, .customLong("output")], help: "Write to this file instead of standard output.")
    var output: String?

    @Option(help: "The model: a folder's name in the models folder.")
    var model: String = WhisperModel.defaultName

    func validate() throws {
        guard let format = TranscriptionFormat(rawValue: format), [.verboseJSON, .srt, .vtt].contains(format) else {
            throw ValidationError("--format \(format): use verbose_json, srt or vtt")
        }
    }

    func run() async throws {
        try await reportingErrors {
            let words: String
            do {
                words = try String(contentsOfFile: text, encoding: .utf8)
            } catch {
                Terminal.error("\(text): cannot read the text file (missing, unreadable or not UTF-8)")
                throw ExitCode.failure
            }
            guard !WordAligner.words(in: words).isEmpty else {
                Terminal.error("\(text): no words in it")
                throw ExitCode.failure
            }
            let samples = try WhisperRecognizer.audio(fileAt: URL(fileURLWithPath: file))
            let recognizer = try WhisperRecognizer(model: try WhisperModel.named(model))
            let transcript = try await recognizer.transcribe(samples)
            let aligned = transcript.alignment(of: words, samples: samples, rate: WhisperRecognizer.sampleRate)
            try TranscribeCommand.write(TranscriptionFormat(rawValue: format)!.render(aligned), to: output)
        }
    }
}
