public import ChorusSpeech
import ChorusWire
import Foundation

/// OpenAI speech to text: `POST /v1/audio/transcriptions` (multipart), bearer auth, the same base URL, key, HTTP
/// client and error mapping as `OpenAIProvider`. `whisper-1` answers `verbose_json` with word timestamps; the newer
/// models (`gpt-4o-transcribe`, `gpt-4o-mini-transcribe`) answer text only, and their words are timed by the aligner
/// on the audio.
public struct OpenAISpeechToText: SpeechToTextProvider {
    public let id = "openai"
    /// The model asked for (`OPENAI_TRANSCRIPTION_MODEL`, default `whisper-1`).
    public let model: String
    let speech: OpenAIProvider
    public static let defaultModel = "whisper-1"

    public var modelIdentity: [String] { ["openai", model] }
    /// True when an API key is configured.
    public var isConfigured: Bool { speech.isConfigured }

    public init(
        baseURL: String = OpenAIProvider.hosting.baseURL, apiKey: String?, model: String = OpenAISpeechToText.defaultModel,
        timeoutSeconds: Int64 = BuiltInProvider.timeoutSeconds
    ) {
        self.init(speech: OpenAIProvider(baseURL: baseURL, apiKey: apiKey, timeoutSeconds: timeoutSeconds), model: model)
    }

    /// Configured as `OpenAIProvider(environment:)` is (`OPENAI_BASE_URL`, `OPENAI_API_KEY`), with `model` (else
    /// `OPENAI_TRANSCRIPTION_MODEL`, else the default).
    public init(environment: [String: String], model: String? = nil) {
        self.init(
            speech: OpenAIProvider(environment: environment),
            model: model ?? SpeechToTextModel.configured(environment["OPENAI_TRANSCRIPTION_MODEL"]) ?? Self.defaultModel)
    }

    init(speech: OpenAIProvider, model: String) {
        self.speech = speech
        self.model = model
    }

    /// Whether `model` gives word timestamps (`verbose_json` with `timestamp_granularities[]=word`).
    var timesWords: Bool { model.hasPrefix("whisper") }

    public func transcribe(_ request: SpeechToTextRequest) async throws -> Transcript {
        let apiKey = try speech.requireKey()
        var form = MultipartForm.Writer(boundary: "chorus-" + UUID().uuidString)
        form.add("file", data: try request.wav(), filename: "audio.wav", contentType: "audio/wav")
        form.add("model", model)
        if let language = request.language { form.add("language", language) }
        if timesWords {
            form.add("response_format", "verbose_json")
            form.add("timestamp_granularities[]", "word")
        } else {
            form.add("response_format", "json")
        }
        let response = try await speech.http.send(
            .POST, ProviderHTTP.join(speech.baseURL, "/v1/audio/transcriptions"),
            headers: apiKey.map { [("Authorization", "Bearer \($0)")] } ?? [], body: form.finished(),
            contentType: form.contentType)
        guard response.status == 200 else { throw speech.error(for: response) }
        let (object, text) = try HostedTranscript.answer(response, provider: id, http: speech.http)
        let language = LanguageNames.code(of: (object["language"] as? String) ?? request.language ?? "")
        let words =
            timesWords
            ? try HostedTranscript.words(object["words"] as? [[String: Any]] ?? [], key: "word", provider: id, duration: request.duration)
            : []
        return HostedTranscript.transcript(
            text: text, language: language, words: words, request: request,
            duration: HostedTranscript.seconds(object["duration"]))
    }
}

extension OpenAISpeechToText: CustomStringConvertible, CustomReflectable {
    /// The provider, its model and base URL; the API key is never part of a description.
    public var description: String { "OpenAISpeechToText(model: \(model), \(speech.description))" }
    public var customMirror: Mirror { Mirror(self, children: ["description": description]) }
}
