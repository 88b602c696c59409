public import Foundation

/// The voice providers Chorus can use, by id.
///
/// ```swift
/// let registry = VoiceRegistry.standard()          // piper, kokoro, flite, espeak, elevenlabs, openai (keys from the environment)
/// let provider = try registry.provider(for: VoiceID("openai:nova")!)
/// ```
public struct VoiceRegistry: Sendable {
    public private(set) var providers: [String: any VoiceProvider]
    /// Why the `CHORUS_PROVIDERS` file could not be used, if it could not: `Chorus(configuration:)` throws it, so a
    /// broken file stops the CLI and the service at once instead of leaving its providers out.
    public private(set) var configurationError: VoiceError?

    /// The providers by id (a later one replaces an earlier one of the same id).
    public init(providers: [any VoiceProvider]) {
        self.providers = Dictionary(providers.map { ($0.id, $0) }, uniquingKeysWith: { _, last in last })
    }

    /// Piper, Kokoro, Flite and espeak-ng (offline), ElevenLabs and OpenAI, configured from `environment`, and the
    /// OpenAI-compatible servers of the `CHORUS_PROVIDERS` file (`ProvidersFile`).
    public static func standard(environment: [String: String] = ProcessInfo.processInfo.environment) -> VoiceRegistry {
        var providers: [any VoiceProvider] = [
            PiperProvider(folder: PiperVoice.voicesFolder(environment: environment)),
            KokoroProvider(folder: KokoroModel.folder(environment: environment)), FliteProvider(),
            EspeakProvider(), ElevenLabsProvider(environment: environment),
            OpenAIProvider(environment: environment),
        ]
        var error: VoiceError?
        do {
            providers += try ProvidersFile.load(environment: environment)?.providers(environment: environment) ?? []
        } catch let failure as VoiceError {
            error = failure
        } catch let other {
            error = VoiceError(.configuration, provider: ProvidersFile.environmentKey, message: "\(other)")
        }
        var registry = VoiceRegistry(providers: providers)
        registry.configurationError = error
        return registry
    }

    /// Provider ids, sorted.
    public var ids: [String] { providers.keys.sorted() }

    /// - Throws: `VoiceError.configuration` naming the unknown provider and the known ones.
    public func provider(for voice: VoiceID) throws -> any VoiceProvider {
        guard let provider = providers[voice.provider] else {
            throw VoiceError(
                .configuration, provider: voice.provider,
                message: "unknown voice provider (known: \(ids.joined(separator: ", ")))")
        }
        return provider
    }
}
