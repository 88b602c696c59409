import ChorusAudio
import ChorusInference
import ChorusSpeech
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
    /// The provider for audio in a language (`nil`: not known).
    package let provide: @Sendable (_ language: String?) async throws -> (any SpeechToTextProvider)?
    /// What that provider's `modelIdentity` will be, said without loading it (`nil`: it must be asked), so that cached
    /// transcripts are found before any model is loaded.
    package let identity: @Sendable (_ language: String?) -> [String]?
    /// True for `.off`: renders never ask.
    public let isOff: Bool
    /// True when the provider is the offline Whisper, which hears a render's short messages together
    /// (`WhisperRecognizer.transcribe(together:language:sharpen:)`).
    package let hearsTogether: Bool

    /// A transcriber from a function that gives the provider.
    /// - Parameters:
    ///   - identity: The provider's `modelIdentity` for a language, when it can be told without providing it (a model's
    ///     files: `WhisperRecognizer.identity(ofModel:in:)`); the cache is then read before anything is loaded.
    ///   - provide: Asked for the provider when a recorded message needs one (with the conversation's language, when it
    ///     says one); `nil` or an error means none for now (the render goes on without words and says why in a warning).
    public init(
        identity: @escaping @Sendable (_ language: String?) -> [String]? = { _ in nil },
        _ provide: @escaping @Sendable (_ language: String?) async throws -> (any SpeechToTextProvider)?
    ) {
        self.init(identity: identity, together: false, provide)
    }

    init(
        identity: @escaping @Sendable (_ language: String?) -> [String]?, together: Bool,
        _ provide: @escaping @Sendable (_ language: String?) async throws -> (any SpeechToTextProvider)?
    ) {
        self.provide = provide
        self.identity = identity
        hearsTogether = together
        isOff = false
    }

    private init(off: Void) {
        provide = { _ in nil }
        identity = { _ in nil }
        hearsTogether = false
        isOff = true
    }

    /// No transcription.
    public static let off = Transcriber(off: ())

    /// The default model of the models folder (`WhisperModel.defaultName` in `ModelFolder.root()`; for audio
    /// in another language than English the multilingual model, `WhisperModel.model(for:)`), loaded when a render first
    /// needs it and shared by every `Chorus` of the process (`WhisperLoader`); loaded again when its files change. Not
    /// installed, or not loading, it is asked again only once its folder changes.
    public static let automatic = Transcriber(identity: { WhisperRecognizer.identity(ofModel: WhisperModel.model(for: $0)) }, together: true) {
        try await WhisperLoader.shared.recognizer(named: WhisperModel.model(for: $0))
    }

    /// `model`, loaded when a render first needs it and shared like `automatic`'s.
    public static func model(_ model: WhisperModel) -> Transcriber {
        let models = model.folder.deletingLastPathComponent()
        let name = model.name
        return Transcriber(identity: { _ in WhisperRecognizer.identity(ofModel: name, in: models) }, together: true) { _ in
            try await WhisperLoader.shared.recognizer(named: name, in: models)
        }
    }

    /// A provider the caller made (a recognizer it loaded, a remote service).
    public static func provider(_ provider: any SpeechToTextProvider) -> Transcriber {
        Transcriber(identity: { _ in provider.modelIdentity }, together: provider is WhisperRecognizer) { _ in provider }
    }
}

extension Transcriber {
    /// The speech-to-text providers by name: offline Whisper, OpenAI, ElevenLabs.
    public static let providerNames = ["whisper", "openai", "elevenlabs"]

    /// The provider `name` names (`providerNames`) with `model` (else its default: `WhisperModel.defaultName` — the
    /// multilingual model for audio said to be in another language, `WhisperModel.model(for:)` —, `whisper-1`,
    /// `scribe_v1`), keys and base URLs from `environment` (`OPENAI_API_KEY`, `ELEVENLABS_API_KEY`, …).
    /// - Throws: `VoiceError` (`.configuration`) for an unknown name, or a Whisper model that is not installed.
    public static func named(
        _ name: String, model: String? = nil,
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws -> Transcriber {
        switch name {
        case "whisper":
            let models = ModelFolder.root(environment: environment)
            if let model { return .model(try WhisperModel.named(model, in: models)) }
            _ = try WhisperModel.named(WhisperModel.defaultName, in: models)  // installed, and sound
            return Transcriber(identity: { WhisperRecognizer.identity(ofModel: WhisperModel.model(for: $0, in: models), in: models) }, together: true)
            {
                try await WhisperLoader.shared.recognizer(named: WhisperModel.model(for: $0, in: models), in: models)
            }
        default:
            return .provider(try remote(name, model: model, environment: environment))
        }
    }

    /// The remote provider `name` names (`openai`, `elevenlabs`) with `model` (else its default), keys and base URLs
    /// from `environment`.
    /// - Throws: `VoiceError` (`.configuration`) for a name that is not a remote provider's.
    public static func remote(
        _ name: String, model: String? = nil,
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws -> any SpeechToTextProvider {
        switch name {
        case "openai":
            return OpenAISpeechToText(environment: environment, model: model)
        case "elevenlabs":
            return ElevenLabsSpeechToText(environment: environment, model: model)
        default:
            throw VoiceError(
                .configuration, provider: "transcription",
                message: "no speech-to-text provider \"\(name)\" (known: \(providerNames.joined(separator: ", ")))")
        }
    }
}
