import ChorusAudio
public import Foundation

/// Where a `Chorus` instance gets the speech-to-text provider that gives recorded messages their words
/// (`Chorus.Configuration.transcriber`, used by renders and `Chorus.transcribe`).
///
/// ```swift
/// var configuration = Chorus.Configuration()
/// configuration.transcriber = .off                                  // recorded messages stay without words
/// configuration.transcriber = .model(try WhisperModel.named("whisper-base.en"))
/// configuration.transcriber = .provider(OpenAISpeechToText(environment: ProcessInfo.processInfo.environment))
/// ```
public struct Transcriber: Sendable {
    let provide: @Sendable () async throws -> (any SpeechToTextProvider)?
    /// True for `.off`: renders never ask.
    public let isOff: Bool

    /// Renders ask `provide` for the provider when a recorded message needs one; `nil` or an error means none for
    /// now (the render goes on without words and says why in a warning).
    public init(_ provide: @escaping @Sendable () async throws -> (any SpeechToTextProvider)?) {
        self.provide = provide
        isOff = false
    }

    private init(off: Void) {
        provide = { nil }
        isOff = true
    }

    /// No transcription.
    public static let off = Transcriber(off: ())

    /// The default model of the models folder (`WhisperModel.defaultName` in `WhisperModel.modelsFolder()`), loaded when
    /// a render first needs it and shared by every `Chorus` of the process; loaded again when its files change. Not
    /// installed, or not loading, it is asked again only once its folder changes.
    public static let automatic = Transcriber { try await SharedRecognizers.shared.recognizer(named: WhisperModel.defaultName) }

    /// `model`, loaded when a render first needs it and shared like `automatic`'s.
    public static func model(_ model: WhisperModel) -> Transcriber {
        Transcriber { try await SharedRecognizers.shared.recognizer(named: model.name, in: model.folder.deletingLastPathComponent()) }
    }

    /// A provider the caller made (a recognizer it loaded, a remote service).
    public static func provider(_ provider: any SpeechToTextProvider) -> Transcriber { Transcriber { provider } }
}

/// One load per model folder for the whole process: a recognizer holds hundreds of megabytes, and every `Chorus`
/// instance of a process (the CLI's, a test's, a service's) can share it. A load runs on a thread of its own, never
/// Swift's cooperative pool (it is a second of CPU work).
actor SharedRecognizers {
    static let shared = SharedRecognizers()
    private let loader = WorkerPool(threads: 1, name: "whisper-load")
    private var loads: [String: (stamp: [String], task: Task<WhisperRecognizer, any Error>)] = [:]

    /// The recognizer of model `name` in `models`.
    /// - Throws: `VoiceError` (`.configuration`) naming the model file and the reason, for as long as the folder stays as it is.
    func recognizer(named name: String, in models: URL = WhisperModel.modelsFolder()) async throws -> WhisperRecognizer {
        let folder = models.appendingPathComponent(name, isDirectory: true)
        let stamp = WhisperModel.contents(of: folder)
        if let load = loads[folder.path], load.stamp == stamp { return try await load.task.value }
        let loader = self.loader
        let task = Task {
            try await loader.run { try WhisperRecognizer(model: try WhisperModel.named(name, in: models), threads: WhisperRecognizer.defaultLanes) }
        }
        loads[folder.path] = (stamp, task)
        return try await task.value
    }
}

extension Transcriber {
    /// The speech-to-text providers by name: offline Whisper, OpenAI, ElevenLabs.
    public static let providerNames = ["whisper", "openai", "elevenlabs"]

    /// The provider `name` names (`providerNames`) with `model` (else its default: `WhisperModel.defaultName`,
    /// `whisper-1`, `scribe_v1`), keys and base URLs from `environment` (`OPENAI_API_KEY`, `ELEVENLABS_API_KEY`, …).
    /// - Throws: `VoiceError` (`.configuration`) for an unknown name, or a Whisper model that is not installed.
    public static func named(_ name: String, model: String? = nil,
                             environment: [String: String] = ProcessInfo.processInfo.environment) throws -> Transcriber {
        switch name {
        case "whisper":
            return .model(try WhisperModel.named(model ?? WhisperModel.defaultName, in: WhisperModel.modelsFolder(environment: environment)))
        default:
            return .provider(try remote(name, model: model, environment: environment))
        }
    }

    /// The remote provider `name` names (`openai`, `elevenlabs`) with `model` (else its default), keys and base URLs
    /// from `environment`.
    /// - Throws: `VoiceError` (`.configuration`) for a name that is not a remote provider's.
    public static func remote(_ name: String, model: String? = nil,
                              environment: [String: String] = ProcessInfo.processInfo.environment) throws -> any SpeechToTextProvider {
        switch name {
        case "openai":
            return OpenAISpeechToText(environment: environment, model: model)
        case "elevenlabs":
            return ElevenLabsSpeechToText(environment: environment, model: model)
        default:
            throw VoiceError(.configuration, provider: "transcription",
                             message: "no speech-to-text provider \"\(name)\" (known: \(providerNames.joined(separator: ", ")))")
        }
    }
}
