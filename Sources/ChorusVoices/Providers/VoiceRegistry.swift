public import Foundation

/// The voice providers Chorus can use, by id.
///
/// ```swift
/// let registry = VoiceRegistry.standard()          // piper, flite, espeak, elevenlabs, openai (keys from the environment)
/// let provider = try registry.provider(for: VoiceID("openai:nova")!)
/// ```
public struct VoiceRegistry: Sendable {
    public private(set) var providers: [String: any VoiceProvider]

    public init(providers: [any VoiceProvider]) {
        self.providers = Dictionary(providers.map { ($0.id, $0) }, uniquingKeysWith: { _, last in last })
    }

    /// Piper, Flite and espeak-ng (offline), ElevenLabs and OpenAI, configured from `environment`.
    public static func standard(environment: [String: String] = ProcessInfo.processInfo.environment) -> VoiceRegistry {
        VoiceRegistry(providers: [PiperProvider(folder: PiperVoice.voicesFolder(environment: environment)), FliteProvider(), EspeakProvider(),
                                  ElevenLabsProvider(environment: environment),
                                  OpenAIProvider(environment: environment)])
    }

    /// Provider ids, sorted.
    public var ids: [String] { providers.keys.sorted() }

    /// - Throws: `VoiceError.configuration` naming the unknown provider and the known ones.
    public func provider(for voice: VoiceID) throws -> any VoiceProvider {
        guard let provider = providers[voice.provider] else {
            throw VoiceError(.configuration, provider: voice.provider,
                             message: "unknown voice provider (known: \(ids.joined(separator: ", ")))")
        }
        return provider
    }
}
