public import Foundation

/// Named OpenAI-compatible text-to-speech servers as providers, from the JSON file `CHORUS_PROVIDERS` names
/// (the CLI and the service read the same file):
///
/// ```json
/// {"kokoro": {"kind": "openai", "base_url": "http://127.0.0.1:8880/v1", "api_key_env": "KOKORO_API_KEY",
///             "model": "kokoro", "voices": ["af_heart", "am_adam"]}}
/// ```
///
/// `kokoro:af_heart` then goes to that server with the retries, limits, cache and secrets rules of `openai:`.
/// `api_key_env` names the environment variable holding the key (none sent without it); `voices`, when given, are
/// the only ones accepted and are what `chorus voices` lists; `response_format` is what is asked for (`wav` by default:
/// it carries its own sample rate, which servers' raw `pcm` does not always match; `pcm` is OpenAI's 24 kHz). An entry
/// named `openai` reconfigures the built-in provider (its `model` is the default model, so a retired model name is
/// changed without a release). Offline engines' names (`piper`, `flite`, `espeak`) and `elevenlabs` are taken.
public struct ProvidersFile: Sendable, Equatable {
    /// The environment variable naming the file.
    public static let environmentKey = "CHORUS_PROVIDERS"
    /// Names no entry may take: providers that do not speak OpenAI's wire format.
    public static let reservedNames = BuiltInProvider.reserved
    static let responseFormats = ["wav", "pcm", "mp3", "flac", "opus", "aac"]

    public struct Endpoint: Sendable, Equatable {
        public var name: String
        public var baseURL: String
        public var apiKeyVariable: String?
        public var model: String?
        public var voices: [String]?
        public var responseFormat: String
    }

    public var endpoints: [Endpoint]

    /// The file `CHORUS_PROVIDERS` names, read and checked; nil when the variable is unset or empty.
    /// - Throws: `VoiceError.configuration` naming the file and the field.
    public static func load(environment: [String: String]) throws -> ProvidersFile? {
        guard let path = environment[environmentKey], !path.isEmpty else { return nil }
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            throw VoiceError(.configuration, provider: environmentKey, message: "\(path) cannot be read: \((error as NSError).localizedDescription)")
        }
        return try parse(data, subject: "\(environmentKey) (\(path))")
    }

    /// - Throws: `VoiceError.configuration` naming `subject` and the field.
    public static func parse(_ data: Data, subject: String) throws -> ProvidersFile {
        func fail(_ message: String) -> VoiceError { VoiceError(.configuration, provider: subject, message: message) }
        guard let root = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] else {
            throw fail("not a JSON object of providers by name")
        }
        var endpoints: [Endpoint] = []
        for (name, value) in root.sorted(by: { $0.key < $1.key }) {
            guard name.range(of: #"^[a-z][a-z0-9_-]{0,31}$"#, options: .regularExpression) != nil else {
                throw fail("\"\(name)\": a provider's name is 1–32 of a–z, 0–9, _ and -, starting with a letter")
            }
            guard !reservedNames.contains(name) else { throw fail("\"\(name)\": the name is taken by a built-in provider") }
            guard let entry = value as? [String: Any] else { throw fail("\(name): not an object") }
            let known: Set<String> = ["kind", "base_url", "api_key_env", "model", "voices", "response_format"]
            if let unknown = entry.keys.sorted().first(where: { !known.contains($0) }) {
                throw fail("\(name).\(unknown): unknown field (known: \(known.sorted().joined(separator: ", ")))")
            }
            guard entry["kind"] as? String == "openai" else {
                throw fail("\(name).kind: must be \"openai\" (the only kind of server there is yet)")
            }
            func string(_ field: String) throws -> String? {
                guard let value = entry[field] else { return nil }
                guard let text = value as? String, !text.trimmingCharacters(in: .whitespaces).isEmpty else {
                    throw fail("\(name).\(field): must be a non-empty string")
                }
                return text
            }
            guard let baseURL = try string("base_url") else {
                throw fail("\(name).base_url: missing (the server's URL, e.g. http://127.0.0.1:8880/v1)")
            }
            guard let url = URL(string: baseURL), ["http", "https"].contains(url.scheme?.lowercased() ?? ""), url.host?.isEmpty == false else {
                throw fail("\(name).base_url: \"\(baseURL)\" is not an http(s) URL")
            }
            let keyVariable = try string("api_key_env")
            if let keyVariable, keyVariable.range(of: #"^[A-Za-z_][A-Za-z0-9_]*$"#, options: .regularExpression) == nil {
                throw fail(
                    "\(name).api_key_env: \"\(keyVariable)\" is not an environment variable's name (the key itself does not belong in the file)")
            }
            let model = try string("model")
            if model == nil && name != "openai" { throw fail("\(name).model: missing (the model the server expects, e.g. \"kokoro\")") }
            var voices: [String]?
            if let raw = entry["voices"] {
                guard let list = raw as? [String], !list.isEmpty, list.allSatisfy({ !$0.isEmpty && !$0.contains(":") }) else {
                    throw fail("\(name).voices: must be a non-empty list of voice names (no colons)")
                }
                voices = list
            }
            let format = try string("response_format") ?? (name == "openai" ? "pcm" : "wav")
            guard responseFormats.contains(format) else {
                throw fail("\(name).response_format: \"\(format)\" is not one of \(responseFormats.joined(separator: ", "))")
            }
            endpoints.append(
                Endpoint(
                    name: name, baseURL: baseURL, apiKeyVariable: keyVariable, model: model, voices: voices,
                    responseFormat: format))
        }
        return ProvidersFile(endpoints: endpoints)
    }

    /// A provider per entry, keys read from `environment`.
    func providers(environment: [String: String]) -> [OpenAIProvider] {
        endpoints.map { endpoint in
            // The built-in `openai` keeps its key variable unless the entry names another.
            let keyVariable =
                endpoint.apiKeyVariable ?? (endpoint.name == BuiltInProvider.openai.rawValue ? BuiltInProvider.openai.hosting?.keyVariable : nil)
            return OpenAIProvider(
                id: endpoint.name, baseURL: endpoint.baseURL, apiKey: keyVariable.flatMap { environment[$0] },
                keyVariable: keyVariable, defaultModel: endpoint.model ?? OpenAIProvider.builtInModel,
                voices: endpoint.voices, responseFormat: endpoint.responseFormat)
        }
    }
}
