import ChorusConversation
import ChorusListening
import ChorusWire
import Foundation

/// Who answers each `model` name of `/v1/audio/transcriptions` and `/v1/audio/alignments`
/// (`ServiceConfiguration.transcriptionModels`): the offline model (`SpeechRecognition`) or a remote provider, made
/// once from the configuration (keys and base URLs from its `environment`).
struct TranscriptionRoutes: Sendable {
    enum Answerer: Sendable {
        /// An offline model: the service's default (`nil`) or one named.
        case offline(String?)
        /// A remote provider, asked through the engine's policies (concurrency, retries, the transcript cache).
        case remote(any SpeechToTextProvider)
    }

    private let routes: [String: (route: ServiceConfiguration.TranscriptionRoute, answerer: Answerer)]

    /// - Throws: `VoiceError` (`.configuration`) for a provider name that is not a remote provider's
    ///   (`ServiceConfiguration.validate()` refuses those first).
    init(configuration: ServiceConfiguration) throws {
        routes = try configuration.transcriptionModels.mapValues { route in
            guard route.provider != ServiceConfiguration.TranscriptionRoute.offline.provider else { return (route, .offline(route.model)) }
            return (route, .remote(try Transcriber.remote(route.provider, model: route.model, environment: configuration.environment)))
        }
    }

    /// Who answers `model`: a configured name, else an offline model by its own name (`recognition.serves`).
    /// - Throws: `ServiceError` 400 naming the names that are served.
    func answerer(for model: String, recognition: SpeechRecognition) throws -> Answerer {
        if let found = routes[model] { return found.answerer }
        if recognition.serves(model) { return .offline(model) }
        let offline = recognition.modelName.map { [$0] + WhisperModel.names(in: recognition.folder).filter { $0 != recognition.modelName } } ?? []
        let served = (routes.keys.sorted() + offline).joined(separator: ", ")
        throw ServiceError.badRequest("model: \"\(model.prefix(100))\" is not served here; use one of \(served)", field: "model")
    }

    /// What `/health` says of each name: the offline model's state for the names it answers, and for a remote
    /// provider whether it has its key.
    func health(recognition: SpeechRecognition) -> [String: TranscriptionHealth] {
        routes.mapValues { entry in
            switch entry.answerer {
            case .offline(let name):
                return name.map { recognition.health(of: $0) } ?? recognition.health
            case .remote(let provider):
                return provider.isConfigured
                    ? TranscriptionHealth(status: "ready", model: entry.route.description)
                    : TranscriptionHealth(
                        status: "unavailable", model: entry.route.description,
                        reason: "\(provider.id) has no API key configured on this service")
            }
        }
    }
}
