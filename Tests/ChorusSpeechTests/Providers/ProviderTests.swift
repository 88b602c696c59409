import ChorusFixtures
import ChorusTestSupport
import Testing

@testable import ChorusSpeech

/// ElevenLabs and OpenAI against local stubs that speak their wire contracts.
///
/// The providers alone; renders through them (contracts, retries, failures) are tested in ChorusConversationTests.
@Suite("HTTP providers against local stubs")
struct ProviderTests {
    @Test("a missing API key is a configuration error naming the variable")
    func missingKey() async throws {
        let provider = OpenAIProvider(apiKey: nil)
        do {
            _ = try await provider.synthesize(SynthesisRequest(voice: "nova", text: "Hi", outputFormat: "pcm"))
            Issue.record("expected an error")
        } catch let error as VoiceError {
            #expect(error.kind == .configuration && error.description.contains("OPENAI_API_KEY is not set"))
        }
    }

    @Test("voices lists ElevenLabs voices from GET /v1/voices")
    func listVoices() async throws {
        let server = try StubServer { request in
            guard request.path == "/v1/voices", request.headers["xi-api-key"] == testKey else { return .json(404, ["detail": "Not Found"]) }
            return .json(
                200,
                [
                    "voices": [
                        [
                            "voice_id": "21m00Tcm4TlvDq8ikWAM", "name": "Rachel", "category": "premade",
                            "labels": ["accent": "american", "gender": "female"],
                        ]
                    ]
                ])
        }
        let voices = try await ElevenLabsProvider(baseURL: server.baseURL, apiKey: testKey).voices()
        #expect(
            voices == [
                VoiceInfo(
                    id: VoiceID(provider: "elevenlabs", voice: "21m00Tcm4TlvDq8ikWAM"), name: "Rachel",
                    details: "premade, american, female")
            ])
        let espeak = try await EspeakProvider().voices()
        #expect(espeak.count > 20)
        #expect(espeak.prefix(8).map(\.id.voice) == EspeakProvider.defaultVoices)
    }
}
