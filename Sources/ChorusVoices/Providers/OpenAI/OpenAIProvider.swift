public import ChorusAudio
import Foundation

/// OpenAI text to speech: `POST /v1/audio/speech` with `response_format: "pcm"` (24 kHz 16-bit mono),
/// bearer auth. It gives no timings, so its messages have no `words`.
/// Base URL from `OPENAI_BASE_URL` (default `https://api.openai.com/v1`), key from `OPENAI_API_KEY`.
///
/// Settings (`voice_settings.openai`): `model` (default `gpt-4o-mini-tts`), `speed` (0.25–4),
/// `instructions` (not for `tts-1`/`tts-1-hd`).
public struct OpenAIProvider: VoiceProvider {
    public let id = "openai"
    let baseURL: String
    let apiKey: String?
    let http: ProviderHTTP

    static let defaultModel = "gpt-4o-mini-tts"
    /// True when an API key is configured.
    public var isConfigured: Bool { apiKey != nil }

    /// OpenAI's own voice names.
    public static let builtInVoices = ["alloy", "ash", "ballad", "coral", "echo", "fable", "onyx", "nova", "sage", "shimmer",
                                "verse", "marin", "cedar"]

    public init(baseURL: String = "https://api.openai.com/v1", apiKey: String?, timeoutSeconds: Int64 = 120) {
        self.baseURL = baseURL
        self.apiKey = apiKey?.isEmpty == true ? nil : apiKey
        var http = ProviderHTTP(provider: "openai", secrets: apiKey.map { [$0] } ?? [])
        http.timeoutSeconds = timeoutSeconds
        self.http = http
    }

    /// Configured from `OPENAI_BASE_URL` and `OPENAI_API_KEY`.
    public init(environment: [String: String]) {
        self.init(baseURL: environment["OPENAI_BASE_URL"] ?? "https://api.openai.com/v1", apiKey: environment["OPENAI_API_KEY"])
    }

    static func model(_ settings: [String: JSONValue]) -> String { settings["model"]?.string ?? defaultModel }

    /// The key, or the error that says it is not set (speech and speech to text alike).
    func requireKey() throws -> String {
        guard let apiKey else { throw VoiceError(.configuration, provider: id, message: "OPENAI_API_KEY is not set") }
        return apiKey
    }

    /// 4,096 characters; `gpt-4o-mini-tts` also caps input at 2,000 tokens, so chunks stay under 1,500 characters.
    public func characterLimit(settings: [String: JSONValue]) -> Int {
        Self.model(settings).hasPrefix("tts-1") ? 4_096 : 1_500
    }

    public func outputFormats(settings: [String: JSONValue]) -> [String] { ["pcm"] }

    public func audioAffectingSettings(_ settings: [String: JSONValue]) -> [String: JSONValue] {
        var result: [String: JSONValue] = ["model": .string(Self.model(settings))]
        if let speed = settings["speed"] { result["speed"] = speed }
        if let instructions = settings["instructions"], !Self.model(settings).hasPrefix("tts-1") { result["instructions"] = instructions }
        return result
    }

    public func voices() async throws -> [VoiceInfo] {
        Self.builtInVoices.map { VoiceInfo(id: VoiceID(provider: id, voice: $0), name: $0.capitalized, details: "built-in voice") }
    }

    public func synthesize(_ request: SynthesisRequest) async throws -> SynthesizedSpeech {
        let apiKey = try requireKey()
        var body = audioAffectingSettings(request.settings)
        body["input"] = .string(request.text)
        body["voice"] = .string(request.voice)
        body["response_format"] = .string("pcm")
        let response = try await http.send(.POST, ProviderHTTP.join(baseURL, "/v1/audio/speech"),
                                           headers: [("Authorization", "Bearer \(apiKey)")],
                                           json: Data(JSONValue.object(body).canonicalText.utf8))
        guard response.status == 200 else { throw error(for: response) }
        if let type = response.nonAudioContentType {
            throw VoiceError(.invalidResponse, provider: id, message: "the answer is \(type), not audio: \(http.redact(String(response.text.prefix(120))))")
        }
        guard response.body.count >= 2 else { throw VoiceError(.invalidResponse, provider: id, message: "empty audio in the response") }
        let samples = PCM16.samples(littleEndian: response.body)
        return SynthesizedSpeech(audio: .pcm(AudioBuffer(format: AudioFormat(sampleRate: 24_000, channels: 1), samples: samples)),
                                 words: nil)
    }

    /// Maps `{"error": {"message", "type", "code"}}` to typed errors (429 `insufficient_quota` is not retried).
    func error(for response: ProviderHTTP.Response) -> VoiceError {
        let error = ProviderHTTP.jsonObject(response.body)?["error"] as? [String: Any]
        var message = (error?["message"] as? String) ?? response.text.trimmingCharacters(in: .whitespacesAndNewlines)
        message = http.redact(message)
        let code = [(error?["code"] as? String) ?? "", (error?["type"] as? String) ?? ""].joined(separator: " ")
        let kind: VoiceError.Kind
        switch response.status {
        case 401, 403: kind = .authentication
        case 429 where code.contains("insufficient_quota"): kind = .quota
        case 429: kind = .rateLimited
        case 400 where message.lowercased().contains("voice"): kind = .voiceNotFound
        case 404 where error == nil: kind = .configuration
        case 408: kind = .timeout
        case 500...599: kind = .unavailable
        default: kind = .badRequest
        }
        if kind == .configuration { message = "no such endpoint (check OPENAI_BASE_URL): \(message)" }
        return VoiceError(kind, provider: id, message: message, status: response.status, retryAfter: response.retryAfter)
    }
}

extension OpenAIProvider: CustomStringConvertible, CustomReflectable {
    /// The provider and its base URL; the API key is never part of a description.
    public var description: String { "OpenAIProvider(baseURL: \(baseURL), key: \(apiKey == nil ? "not set" : "set"))" }
    public var customMirror: Mirror { Mirror(self, children: ["description": description]) }
}
