import ArgumentParser
import ChorusAudio
import ChorusCommandLine
import ChorusConversation
import ChorusListening
import ChorusText
import ChorusWire
import Foundation

struct TranscribeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "transcribe",
        abstract: "Transcribe recorded speech offline with Whisper, with each word's time.",
        discussion: """
            Reads any audio Chorus decodes (voice notes in M4A/AAC, Opus, MP3, WAV…). The model is found by name \
            in the models folder ($CHORUS_MODELS_DIR, else $XDG_DATA_HOME/chorus/models); scripts/setup.sh \
            installs \(WhisperModel.defaultName) (English, the default) and whisper-base (99 languages, detected \
            when --language is not given). Formats are those of OpenAI's transcription API: text, json \
            ({"text"}), verbose_json (language, duration, words and segments with times), srt and vtt (one \
            caption per segment).

            Examples:
              chorus transcribe samples/clips/sarah-1.mp3 --format vtt -o sarah-1.vtt
              chorus transcribe nota-de-voz.m4a --model whisper-base --format verbose_json
            """)

    @Argument(help: "The audio file.")
    var file: String

    @Option(help: "text, json, verbose_json, srt or vtt. (default: text)", transform: TranscriptionFormat.named)
    var format: TranscriptionFormat = .text

    @Option(name: [.short, .customLong("output")], help: "Write to this file instead of standard output.")
    var output: String?

    @OptionGroup var listening: TranscriptionArguments

    func run() async throws {
        try await reportingErrors {
            // The audio is decoded before the model is loaded (a second): a file that is not audio fails at once.
            let samples = try WhisperRecognizer.audio(fileAt: URL(fileURLWithPath: file))
            let transcript = try await listening.transcribe(samples)
            try Self.write(format.render(transcript.transcription), to: output)
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

    @Option(help: "verbose_json, srt or vtt. (default: verbose_json)", transform: TranscriptionFormat.named)
    var format: TranscriptionFormat = .verboseJSON

    @Option(name: [.short, .customLong("output")], help: "Write to this file instead of standard output.")
    var output: String?

    @OptionGroup var listening: TranscriptionArguments

    func validate() throws {
        guard [.verboseJSON, .srt, .vtt].contains(format) else {
            throw ValidationError("--format \(format.rawValue): use verbose_json, srt or vtt")
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
            let transcript = try await listening.transcribe(samples)
            let aligned = transcript.alignment(of: words, samples: samples, rate: WhisperRecognizer.sampleRate)
            try TranscribeCommand.write(format.render(aligned), to: output)
        }
    }
}

/// Who transcribes, shared by `transcribe` and `align`.
struct TranscriptionArguments: ParsableArguments {
    @Option(help: "whisper (offline, the default), openai (OPENAI_API_KEY) or elevenlabs (ELEVENLABS_API_KEY).")
    var provider: String = "whisper"

    @Option(
        help:
            "The model: for whisper a folder's name in the models folder (default \(WhisperModel.defaultName)); for openai \(OpenAISpeechToText.defaultModel) (default) or gpt-4o-transcribe…; for elevenlabs \(ElevenLabsSpeechToText.defaultModel) (default)."
    )
    var model: String?

    @Option(help: "The language spoken (ISO-639-1, e.g. es), when known; else a multilingual model (whisper-base) detects it.")
    var language: String?

    @Option(help: "Cores to transcribe on, a decoding lane each (default: all, at most \(WhisperRecognizer.mostLanes)).")
    var threads: Int?

    @Option(
        name: .customLong("cache-dir"),
        help: "Transcript cache folder (default: $CHORUS_CACHE_DIR, else $XDG_CACHE_HOME/chorus, else ~/.cache/chorus).")
    var cacheDirectory: String?

    @Flag(name: .customLong("no-cache"), help: "Transcribe again even when the cache has this audio's transcript.")
    var noCache = false

    func validate() throws {
        guard Transcriber.providerNames.contains(provider) else {
            throw ValidationError("--provider \(provider): use \(Transcriber.providerNames.joined(separator: ", "))")
        }
        if let threads, !(1...WhisperRecognizer.mostLanes).contains(threads) {
            throw ValidationError("--threads \(threads): use 1 to \(WhisperRecognizer.mostLanes)")
        }
        if let language, !TranscriptionRequest.isLanguageCode(language) {
            throw ValidationError("--language \(language): use an ISO-639-1 code such as en")
        }
    }

    /// The transcript of `samples` (mono at Whisper's rate) by this provider, through the engine's policies and the
    /// transcript cache (`--no-cache`: not from it).
    func transcribe(_ samples: [Float]) async throws -> Transcript {
        try await chorus().transcribe(SpeechToTextRequest(samples: samples, language: language), cached: !noCache)
    }

    private func chorus() throws -> Chorus {
        var configuration = Chorus.Configuration()
        if let cacheDirectory { configuration.cacheDirectory = URL(fileURLWithPath: cacheDirectory) }
        if provider == "whisper", let threads {
            let name = model
            configuration.transcriber = Transcriber(identity: { WhisperRecognizer.identity(ofModel: name ?? WhisperModel.model(for: $0)) }) {
                try await WhisperLoader.shared.recognizer(named: name ?? WhisperModel.model(for: $0), lanes: threads)
            }
        } else {
            configuration.transcriber = try Transcriber.named(provider, model: model)
        }
        return try Chorus(configuration: configuration)
    }
}

extension TranscriptionFormat {
    /// `--format`'s value: a format by its wire name (`verbose_json`), else an error naming the formats there are.
    static func named(_ name: String) throws -> TranscriptionFormat {
        guard let format = TranscriptionFormat(rawValue: name) else {
            throw ValidationError("use \(allCases.map(\.rawValue).joined(separator: ", "))")
        }
        return format
    }
}
