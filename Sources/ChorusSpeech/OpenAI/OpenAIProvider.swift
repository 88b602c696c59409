import ChorusAudio
public import ChorusWire
import Foundation

/// OpenAI text to speech: `POST /v1/audio/speech` with `response_format: "pcm"` (24 kHz 16-bit mono),
/// bearer auth. It gives no timings, so its messages have no `words`.
/// Base URL from `OPENAI_BASE_URL` (default `https://api.openai.com/v1`), key from `OPENAI_API_KEY`.
///
/// Settings (`voice_settings.openai`): `model` (default `gpt-4o-mini-tts`, or the `CHORUS_PROVIDERS` file's),
/// `speed` (0.25–4), `instructions` (not for `tts-1`/`tts-1-hd`).
///
/// The same provider speaks to any OpenAI-compatible server (Kokoro-FastAPI, speaches, `chorus serve`) under a
/// name of its own (`ProvidersFile`): `kokoro:af_heart` with its base URL, model, key (optional) and voices.
public struct OpenAIProvider: VoiceProvider {
    public let id: String
    package let baseURL: String
    let apiKey: String?
    package let http: ProviderHTTP
    /// The model when the settings name none.
    let defaultModel: String
    /// The environment variable the key comes from, for the error when it is not set; nil when no key is needed.
    let keyVariable: String?
    /// The voices the server offers, when configured: others are refused before a request.
    let configuredVoices: [String]?
    /// `pcm` (OpenAI's 24 kHz 16-bit mono), or an encoded format the response carries its own rate in (`wav`, …).
    let responseFormat: String

    static let builtInModel = "gpt-4o-mini-tts"
    /// Where the built-in provider is reached and configured from (`BuiltInProvider.hosting`).
    public static let hosting = BuiltInProvider.openai.hosting!
    /// The speeds OpenAI's speech API takes (`speed`): a conversation's rate is clamped to them, a request outside them
    /// refused.
    public static let speeds = 0.25...4.0
    /// True when an API key is configured, or none is needed.
    public var isConfigured: Bool { apiKey != nil || keyVariable == nil }

    /// OpenAI's speech (and that of the servers speaking its shape) comes without word times.
    public var timesWords: Bool { false }

    /// OpenAI's own voice names.
    public static let builtInVoices = [
        "alloy", "ash", "ballad", "coral", "echo", "fable", "onyx", "nova", "sage", "shimmer",
        "verse", "marin", "cedar",
    ]

    public init(baseURL: String = OpenAIProvider.hosting.baseURL, apiKey: String?, timeoutSeconds: Int64 = BuiltInProvider.timeoutSeconds) {
        self.init(
            id: BuiltInProvider.openai.rawValue, baseURL: baseURL, apiKey: apiKey, keyVariable: Self.hosting.keyVariable,
            timeoutSeconds: timeoutSeconds)
    }

    /// A provider named `id` speaking OpenAI's wire format (`ProvidersFile` makes them).
    init(
        id: String, baseURL: String, apiKey: String?, keyVariable: String?, defaultModel: String = OpenAIProvider.builtInModel,
        voices: [String]? = nil, responseFormat: String = "pcm", timeoutSeconds: Int64 = BuiltInProvider.timeoutSeconds
    ) {
        self.id = id
        self.baseURL = baseURL
        self.apiKey = apiKey?.isEmpty == true ? nil : apiKey
        self.keyVariable = keyVariable
        self.defaultModel = defaultModel
        configuredVoices = voices
        self.responseFormat = responseFormat
        var http = ProviderHTTP(provider: id, secrets: apiKey.map { [$0] } ?? [])
        http.timeoutSeconds = timeoutSeconds
        self.http = http
    }

    /// Configured from `OPENAI_BASE_URL` and `OPENAI_API_KEY`.
    public init(environment: [String: String]) {
        let hosting = Self.hosting
        self.init(baseURL: hosting.baseURL(environment), apiKey: hosting.key(environment))
    }

    func model(_ settings: [String: JSONValue]) -> String { settings["model"]?.string ?? defaultModel }

    /// The key (nil when none is needed), or the error that says it is not set (speech and speech to text alike).
    package func requireKey() throws -> String? {
        guard apiKey == nil, let keyVariable else { return apiKey }
        throw VoiceError(.configuration, provider: id, message: "\(keyVariable) is not set")
    }

    /// 4,096 characters; `gpt-4o-mini-tts` also caps input at 2,000 tokens, so chunks stay under 1,500 characters.
    public func characterLimit(settings: [String: JSONValue]) -> Int {
        model(settings).hasPrefix("tts-1") ? 4_096 : 1_500
    }

    public func outputFormats(settings: [String: JSONValue]) -> [String] { [responseFormat] }

    public func audioAffectingSettings(_ settings: [String: JSONValue]) -> [String: JSONValue] {
        var result: [String: JSONValue] = ["model": .string(model(settings))]
        if let speed = settings["speed"] { result["speed"] = speed }
        if let instructions = settings["instructions"], !model(settings).hasPrefix("tts-1") { result["instructions"] = instructions }
        return result
    }

    public func voices() async throws -> [VoiceInfo] {
        guard let configuredVoices else {
            return Self.builtInVoices.map { VoiceInfo(id: VoiceID(provider: id, voice: $0), name: $0.capitalized, details: "built-in voice") }
        }
        return configuredVoices.map { VoiceInfo(id: VoiceID(provider: id, voice: $0), name: $0, details: "at \(baseURL)") }
    }

    public func adjusting(rate: Double, voice: String, settings: [String: JSONValue]) -> (voice: String, settings: [String: JSONValue]) {
        let current = settings["speed"].flatMap { if case .number(let value) = $0 { value } else { nil } } ?? 1
        var adjusted = settings
        adjusted["speed"] = .number(min(max(current * rate, Self.speeds.lowerBound), Self.speeds.upperBound))
        return (voice, adjusted)
    }

    public func synthesize(_ request: SynthesisRequest) async throws -> SynthesizedSpeech {
        let apiKey = try requireKey()
        if let configuredVoices, !configuredVoices.contains(request.voice) {
            throw VoiceError(
                .voiceNotFound, provider: id,
                message: "\(request.voice) is not one of the voices configured for \(id) (\(configuredVoices.joined(separator: ", ")))")
        }
        var body = audioAffectingSettings(request.settings)
        body["input"] = .string(request.text)
        body["voice"] = .string(request.voice)
        body["response_format"] = .string(request.outputFormat)
        let response = try await http.send(
            .POST, ProviderHTTP.join(baseURL, "/v1/audio/speech"),
            headers: apiKey.map { [("Authorization", "Bearer \($0)")] } ?? [],
            json: Data(JSONValue.object(body).canonicalText.utf8))
        guard response.status == 200 else { throw error(for: response) }
        if let type = response.nonAudioContentType {
            throw VoiceError(
                .invalidResponse, provider: id, message: "the answer is \(type), not audio: \(http.redact(String(response.text.prefix(120))))")
        }
        guard response.body.count >= 2 else { throw VoiceError(.invalidResponse, provider: id, message: "empty audio in the response") }
        guard request.outputFormat == "pcm" else {
            return SynthesizedSpeech(audio: .encoded(response.body, fileExtension: request.outputFormat), words: nil)
        }
        let samples = PCM16.samples(littleEndian: response.body)
        return SynthesizedSpeech(
            audio: .pcm(AudioBuffer(format: AudioFormat(sampleRate: 24_000, channels: 1), samples: samples)),
            words: nil)
    }

    /// Maps `{"error": {"message", "type", "code"}}` to typed errors (429 `insufficient_quota` is not retried).
    package func error(for response: ProviderHTTP.Response) -> VoiceError {
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
        if kind == .configuration {
            message =
                "no such endpoint (check \(id == BuiltInProvider.openai.rawValue && keyVariable == Self.hosting.keyVariable ? Self.hosting.baseURLVariable : "\(id)'s base_url")): \(message)"
        }
        return VoiceError(kind, provider: id, message: message, status: response.status, retryAfter: response.retryAfter)
    }
}

extension OpenAIProvider: CustomStringConvertible, CustomReflectable {
    /// The provider and its base URL; the API key is never part of a description.
    public var description: String { "OpenAIProvider(\(id), baseURL: \(baseURL), key: \(apiKey == nil ? "not set" : "set"))" }
    public var customMirror: Mirror { Mirror(self, children: ["description": description]) }
}
