public import ChorusSpeech
import ChorusWire
import Foundation

/// ElevenLabs speech to text: `POST /v1/speech-to-text` (multipart: `file`, `model_id`, `timestamps_granularity=word`,
/// `language_code`), `xi-api-key` auth, the same base URL, key, HTTP client and error mapping as `ElevenLabsProvider`.
/// It answers every word with its start and end (and spacing and sound events, which are left out), and a speaker
/// label per word when asked to diarize (not asked: a Chorus message has one speaker).
public struct ElevenLabsSpeechToText: SpeechToTextProvider {
    public let id = "elevenlabs"
    /// The model asked for (`ELEVENLABS_TRANSCRIPTION_MODEL`, default `scribe_v1`).
    public let model: String
    let speech: ElevenLabsProvider
    public static let defaultModel = "scribe_v1"

    public var modelIdentity: [String] { ["elevenlabs", model] }
    /// True when an API key is configured.
    public var isConfigured: Bool { speech.apiKey != nil }

    public init(
        baseURL: String = ElevenLabsProvider.hosting.baseURL, apiKey: String?, model: String = ElevenLabsSpeechToText.defaultModel,
        timeoutSeconds: Int64 = BuiltInProvider.timeoutSeconds
    ) {
        self.init(speech: ElevenLabsProvider(baseURL: baseURL, apiKey: apiKey, timeoutSeconds: timeoutSeconds), model: model)
    }

    /// Configured as `ElevenLabsProvider(environment:)` is (`ELEVENLABS_BASE_URL`, `ELEVENLABS_API_KEY`), with `model`
    /// (else `ELEVENLABS_TRANSCRIPTION_MODEL`, else the default).
    public init(environment: [String: String], model: String? = nil) {
        self.init(
            speech: ElevenLabsProvider(environment: environment),
            model: model ?? SpeechToTextModel.configured(environment["ELEVENLABS_TRANSCRIPTION_MODEL"]) ?? Self.defaultModel)
    }

    init(speech: ElevenLabsProvider, model: String) {
        self.speech = speech
        self.model = model
    }

    public func transcribe(_ request: SpeechToTextRequest) async throws -> Transcript {
        let apiKey = try speech.requireKey()
        var form = MultipartForm.Writer(boundary: "chorus-" + UUID().uuidString)
        form.add("file", data: try request.wav(), filename: "audio.wav", contentType: "audio/wav")
        form.add("model_id", model)
        form.add("timestamps_granularity", "word")
        form.add("tag_audio_events", "false")
        if let language = request.language { form.add("language_code", language) }
        let response = try await speech.http.send(
            .POST, ProviderHTTP.join(speech.baseURL, "/v1/speech-to-text"),
            headers: [("xi-api-key", apiKey)], body: form.finished(),
            contentType: form.contentType)
        guard response.status == 200 else { throw speech.error(for: response) }
        let (object, text) = try HostedTranscript.answer(response, provider: id, http: speech.http)
        // Spacing and sound events are items too: only words are kept.
        let items = ((object["words"] as? [[String: Any]]) ?? []).filter { ($0["type"] as? String ?? "word") == "word" }
        let words = try HostedTranscript.words(items, key: "text", provider: id, duration: request.duration)
        let language = LanguageNames.code(of: (object["language_code"] as? String) ?? request.language ?? "")
        return HostedTranscript.transcript(text: text, language: language, words: words, request: request)
    }
}

extension ElevenLabsSpeechToText: CustomStringConvertible, CustomReflectable {
    /// The provider, its model and base URL; the API key is never part of a description.
    public var description: String {
        "ElevenLabsSpeechToText(model: \(model), base URL: \(speech.baseURL), key: \(isConfigured ? "set" : "not set"))"
    }
    public var customMirror: Mirror { Mirror(self, children: ["description": description]) }
}
