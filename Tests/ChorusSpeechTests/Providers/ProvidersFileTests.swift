import ChorusSpeechTestSupport
import Foundation
import Testing

@testable import ChorusSpeech

/// The file alone (the contract's: `ProvidersFileContract`); the engine it configures and renders through its servers
/// are tested in ChorusConversationTests.
@Suite("OpenAI-compatible servers named in CHORUS_PROVIDERS")
struct ProvidersFileTests {
    @Test("the contract's file: one provider, its URL, key variable, model and voices; WAV asked for unless said")
    func parsesContract() throws {
        let file = try ProvidersFile.parse(Data(ProvidersFileContract.json.utf8), subject: "test")
        #expect(
            file.endpoints == [
                .init(
                    name: "kokoro", baseURL: "http://127.0.0.1:8880/v1", apiKeyVariable: "KOKORO_API_KEY", model: "kokoro",
                    voices: ["af_heart", "am_adam"], responseFormat: "wav")
            ])
        // `openai` reconfigures the built-in one: its model is the default (changed without a release), PCM as before.
        let openai = try ProvidersFile.parse(
            Data(#"{"openai": {"kind": "openai", "base_url": "https://api.openai.com/v1", "model": "gpt-4o-mini-tts-2026-03-20"}}"#.utf8),
            subject: "test")
        #expect(openai.endpoints.first?.responseFormat == "pcm" && openai.endpoints.first?.apiKeyVariable == nil)
        let provider = try #require(openai.providers(environment: ["OPENAI_API_KEY": "sk-x"]).first)
        #expect(provider.id == "openai" && provider.keyVariable == "OPENAI_API_KEY" && provider.isConfigured)
        #expect(provider.audioAffectingSettings([:])["model"] == .string("gpt-4o-mini-tts-2026-03-20"))
    }

    @Test(
        "a bad file is refused naming the field and why",
        arguments: [
            (#"[1, 2]"#, "not a JSON object"),
            (#"{"Kokoro": {"kind": "openai", "base_url": "http://h/v1", "model": "m"}}"#, "\"Kokoro\": a provider's name"),
            (#"{"piper": {"kind": "openai", "base_url": "http://h/v1", "model": "m"}}"#, "\"piper\": the name is taken"),
            (#"{"k": {"kind": "grpc", "base_url": "http://h/v1", "model": "m"}}"#, "k.kind: must be \"openai\""),
            (#"{"k": {"kind": "openai", "model": "m"}}"#, "k.base_url: missing"),
            (
                #"{"k": {"kind": "openai", "base_url": "file:///etc/passwd", "model": "m"}}"#,
                "k.base_url: \"file:///etc/passwd\" is not an http(s) URL"
            ),
            (#"{"k": {"kind": "openai", "base_url": "http://h/v1"}}"#, "k.model: missing"),
            (
                #"{"k": {"kind": "openai", "base_url": "http://h/v1", "model": "m", "api_key_env": "sk-live-123"}}"#,
                "k.api_key_env: \"sk-live-123\" is not an environment variable's name"
            ),
            (#"{"k": {"kind": "openai", "base_url": "http://h/v1", "model": "m", "voices": []}}"#, "k.voices: must be a non-empty list"),
            (#"{"k": {"kind": "openai", "base_url": "http://h/v1", "model": "m", "response_format": "aiff"}}"#, "k.response_format: \"aiff\""),
            (#"{"k": {"kind": "openai", "base_url": "http://h/v1", "model": "m", "api_key": "secret"}}"#, "k.api_key: unknown field"),
        ])
    func refusesBadFiles(json: String, expected: String) throws {
        let error = #expect(throws: VoiceError.self) { try ProvidersFile.parse(Data(json.utf8), subject: "CHORUS_PROVIDERS (p.json)") }
        #expect(error?.kind == .configuration)
        #expect(
            error?.description.contains(expected) == true && error?.description.contains("CHORUS_PROVIDERS (p.json)") == true,
            "\(String(describing: error))")
    }
}
