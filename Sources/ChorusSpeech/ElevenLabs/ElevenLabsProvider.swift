import ChorusAudio
public import ChorusWire
import Foundation

/// ElevenLabs text to speech: `POST /v1/text-to-speech/{voice_id}/with-timestamps`, `GET /v1/voices`.
///
/// Asks for raw PCM (`pcm_24000`, available on every plan) so nothing is re-encoded, falling back to
/// `mp3_44100_128` when the account may not use PCM. Character alignment becomes word timings.
/// Base URL from `ELEVENLABS_BASE_URL` (default `https://api.elevenlabs.io`), key from `ELEVENLABS_API_KEY`.
///
/// Settings (`voice_settings.elevenlabs` in a conversation): `model_id` (default `eleven_multilingual_v2`),
/// `stability`, `similarity_boost`, `style`, `use_speaker_boost`, `speed`, `language_code`, `seed`,
/// `apply_text_normalization`, `output_format`.
public struct ElevenLabsProvider: VoiceProvider {
    public let id = BuiltInProvider.elevenlabs.rawValue
    package let baseURL: String
    package let apiKey: String?
    package let http: ProviderHTTP
    /// Pronunciation dictionaries made by this provider (`dictionaryLocator(for:key:)`).
    let dictionaries = PronunciationDictionaries()

    static let defaultModel = "eleven_multilingual_v2"
    static let voiceSettingKeys = ["stability", "similarity_boost", "style", "use_speaker_boost", "speed"]
    static let requestKeys = ["language_code", "seed", "apply_text_normalization"]

    /// Where it is reached and configured from (`BuiltInProvider.hosting`).
    public static let hosting = BuiltInProvider.elevenlabs.hosting!

    public init(baseURL: String = ElevenLabsProvider.hosting.baseURL, apiKey: String?, timeoutSeconds: Int64 = BuiltInProvider.timeoutSeconds) {
        self.baseURL = baseURL
        self.apiKey = apiKey?.isEmpty == true ? nil : apiKey
        var http = ProviderHTTP(provider: BuiltInProvider.elevenlabs.rawValue, secrets: apiKey.map { [$0] } ?? [])
        http.timeoutSeconds = timeoutSeconds
        self.http = http
    }

    /// Configured from `ELEVENLABS_BASE_URL` and `ELEVENLABS_API_KEY`.
    public init(environment: [String: String]) {
        let hosting = Self.hosting
        self.init(baseURL: hosting.baseURL(environment), apiKey: hosting.key(environment))
    }

    static func model(_ settings: [String: JSONValue]) -> String { settings["model_id"]?.string ?? defaultModel }

    public func characterLimit(settings: [String: JSONValue]) -> Int {
        let model = Self.model(settings)
        if model.hasPrefix("eleven_v3") { return 3_000 }
        if model.contains("flash_v2_5") || model.contains("turbo_v2_5") { return 40_000 }
        if model.contains("flash_v2") || model.contains("turbo_v2") { return 30_000 }
        return 10_000
    }

    /// `previous_text`/`next_text` are refused by `eleven_v3`.
    public func supportsContext(settings: [String: JSONValue]) -> Bool { !Self.model(settings).hasPrefix("eleven_v3") }

    public func outputFormats(settings: [String: JSONValue]) -> [String] {
        if let chosen = settings["output_format"]?.string { return [chosen] }
        return ["pcm_24000", "mp3_44100_128"]
    }

    public func audioAffectingSettings(_ settings: [String: JSONValue]) -> [String: JSONValue] {
        var result: [String: JSONValue] = ["model_id": .string(Self.model(settings))]
        for key in Self.voiceSettingKeys + Self.requestKeys { if let value = settings[key] { result[key] = value } }
        return result
    }

    package func requireKey() throws -> String {
        guard let apiKey else {
            throw VoiceError(.configuration, provider: id, message: "\(Self.hosting.keyVariable) is not set")
        }
        return apiKey
    }

    public func voices() async throws -> [VoiceInfo] {
        let key = try requireKey()
        let response = try await http.send(.GET, ProviderHTTP.join(baseURL, "/v1/voices"), headers: [("xi-api-key", key)])
        guard response.status == 200 else { throw error(for: response) }
        guard let list = ProviderHTTP.jsonObject(response.body)?["voices"] as? [[String: Any]] else {
            throw VoiceError(.invalidResponse, provider: id, message: "no \"voices\" in the voice list")
        }
        return list.compactMap { voice in
            guard let voiceID = voice["voice_id"] as? String else { return nil }
            let labels = (voice["labels"] as? [String: Any] ?? [:]).sorted { $0.key < $1.key }.compactMap { $0.value as? String }
            let details = ([voice["category"] as? String].compactMap { $0 } + labels).joined(separator: ", ")
            return VoiceInfo(id: VoiceID(provider: id, voice: voiceID), name: voice["name"] as? String ?? voiceID, details: details)
        }
    }

    public func adjusting(rate: Double, voice: String, settings: [String: JSONValue]) -> (voice: String, settings: [String: JSONValue]) {
        let current = settings["speed"].flatMap { if case .number(let value) = $0 { value } else { nil } } ?? 1
        var adjusted = settings
        adjusted["speed"] = .number(min(max(current * rate, 0.7), 1.2))
        return (voice, adjusted)
    }

    public func synthesize(_ request: SynthesisRequest) async throws -> SynthesizedSpeech {
        let key = try requireKey()
        guard !request.voice.isEmpty, request.voice.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "_" || $0 == "-" }) else {
            throw VoiceError(.voiceNotFound, provider: id, message: "\"\(request.voice)\" is not an ElevenLabs voice id")
        }
        var body: [String: JSONValue] = ["text": .string(request.text), "model_id": .string(Self.model(request.settings))]
        var voiceSettings: [String: JSONValue] = [:]
        for name in Self.voiceSettingKeys { if let value = request.settings[name], value != .null { voiceSettings[name] = value } }
        if !voiceSettings.isEmpty { body["voice_settings"] = .object(voiceSettings) }
        for name in Self.requestKeys { if let value = request.settings[name], value != .null { body[name] = value } }
        if let previous = request.previousText { body["previous_text"] = .string(previous) }
        if let next = request.nextText { body["next_text"] = .string(next) }
        if !request.pronunciations.isEmpty, pronunciationDictionary(settings: request.settings) != nil {
            body["pronunciation_dictionary_locators"] = .array([try await dictionaryLocator(for: request.pronunciations, key: key)])
        }

        let format = request.outputFormat
        let url = ProviderHTTP.join(baseURL, "/v1/text-to-speech/\(request.voice)/with-timestamps") + "?output_format=\(format)"
        let response = try await http.send(.POST, url, headers: [("xi-api-key", key)], json: Data(JSONValue.object(body).canonicalText.utf8))
        guard response.status == 200 else { throw error(for: response) }
        guard let object = ProviderHTTP.jsonObject(response.body), let encoded = object["audio_base64"] as? String,
            let audio = Data(base64Encoded: encoded)
        else {
            throw VoiceError(.invalidResponse, provider: id, message: "no audio_base64 in the response")
        }
        guard !audio.isEmpty else { throw VoiceError(.invalidResponse, provider: id, message: "empty audio in the response") }
        let alignment = (object["alignment"] as? [String: Any]) ?? (object["normalized_alignment"] as? [String: Any])
        return SynthesizedSpeech(audio: try Self.audio(audio, format: format), words: alignment.flatMap(Self.words))
    }

    /// Decodes the body according to the requested `output_format` (never the Content-Type).
    static func audio(_ data: Data, format: String) throws -> SpeechAudio {
        let parts = format.split(separator: "_")
        switch parts.first {
        case "pcm":
            guard parts.count >= 2, let rate = Int(parts[1]) else {
                throw VoiceError(.badRequest, provider: "elevenlabs", message: "unknown output format \(format)")
            }
            return .pcm(AudioBuffer(format: AudioFormat(sampleRate: rate, channels: 1), samples: PCM16.samples(littleEndian: data)))
        case "mp3": return .encoded(data, fileExtension: "mp3")
        case "opus": return .encoded(data, fileExtension: "ogg")
        case "wav": return .encoded(data, fileExtension: "wav")
        default: throw VoiceError(.badRequest, provider: "elevenlabs", message: "unsupported output format \(format)")
        }
    }

    /// Groups per-character alignment into words: whitespace separates words, surrounding punctuation is dropped.
    static func words(_ alignment: [String: Any]) -> [WordTiming]? {
        guard let characters = alignment["characters"] as? [String],
            let starts = (alignment["character_start_times_seconds"] as? [Any])?.compactMap({ ($0 as? NSNumber)?.doubleValue }),
            let ends = (alignment["character_end_times_seconds"] as? [Any])?.compactMap({ ($0 as? NSNumber)?.doubleValue }),
            characters.count == starts.count, starts.count == ends.count, !characters.isEmpty
        else { return nil }
        var words: [WordTiming] = []
        var current = ""
        var start = 0.0
        var end = 0.0
        func flush() {
            let word = current.trimmingCharacters(in: .punctuationCharacters.union(.whitespaces))
            if !word.isEmpty { words.append(WordTiming(word: word, start: start, end: max(start, end))) }
            current = ""
        }
        for index in characters.indices {
            let character = characters[index]
            if character.allSatisfy(\.isWhitespace) {
                flush()
                continue
            }
            if current.isEmpty { start = starts[index] }
            current += character
            end = ends[index]
        }
        flush()
        return words
    }

    /// Maps ElevenLabs' error bodies (`detail` as object, list or string) to typed errors.
    package func error(for response: ProviderHTTP.Response) -> VoiceError {
        var code = ""
        var message = ""
        if let detail = ProviderHTTP.jsonObject(response.body)?["detail"] {
            if let object = detail as? [String: Any] {
                code = (object["code"] as? String) ?? (object["status"] as? String) ?? ""
                message = object["message"] as? String ?? ""
            } else if let list = detail as? [[String: Any]] {
                message = list.compactMap { item in
                    let location = (item["loc"] as? [Any])?.map { "\($0)" }.joined(separator: ".") ?? ""
                    return [location, item["msg"] as? String ?? ""].filter { !$0.isEmpty }.joined(separator: ": ")
                }.joined(separator: "; ")
            } else if let text = detail as? String {
                message = text
            }
        }
        if message.isEmpty { message = response.text.trimmingCharacters(in: .whitespacesAndNewlines) }
        message = http.redact(message)
        let status = response.status
        let lowered = (code + " " + message).lowercased()
        let kind: VoiceError.Kind
        switch status {
        case 401 where lowered.contains("quota"), 402: kind = .quota
        case 401: kind = .authentication
        case 403 where lowered.contains("output format") || lowered.contains("tier") || lowered.contains("subscription"):
            kind = .formatUnavailable
        case 403: kind = .authentication
        case 404 where lowered.contains("voice"), 400 where lowered.contains("voice_not_found"): kind = .voiceNotFound
        case 404: kind = .configuration
        case 429: kind = .rateLimited
        case 408: kind = .timeout
        case 500...599: kind = .unavailable
        default: kind = .badRequest
        }
        if kind == .configuration && status == 404 { message = "no such endpoint (check ELEVENLABS_BASE_URL): \(message)" }
        return VoiceError(kind, provider: id, message: message, status: status, retryAfter: response.retryAfter)
    }
}

extension ElevenLabsProvider: CustomStringConvertible, CustomReflectable {
    /// The provider and its base URL; the API key is never part of a description.
    public var description: String { "ElevenLabsProvider(baseURL: \(baseURL), key: \(apiKey == nil ? "not set" : "set"))" }
    public var customMirror: Mirror { Mirror(self, children: ["description": description]) }
}
