import ChorusAudio
import ChorusConversation
import ChorusListening
public import ChorusSpeech
import ChorusSupport
import ChorusWire
public import Foundation

/// Everything `chorus serve` can be told, with the defaults a family-chat backend needs. Every value
/// has a flag and an environment variable (`CHORUS_…`); `ServiceConfiguration(environment:)` reads
/// the latter, and the CLI lays its flags on top.
///
/// ```swift
/// var configuration = ServiceConfiguration(environment: ProcessInfo.processInfo.environment)
/// configuration.port = 0   // any free port
/// try await ChorusServer(configuration: configuration).run()
/// ```
public struct ServiceConfiguration: Sendable {
    public var host = "127.0.0.1"
    public var port = 8080
    /// Renders, clips and the synthesis cache.
    public var dataDirectory: URL
    /// Bearer keys clients may use; none means open, which is allowed on a loopback host only.
    public var apiKeys: [String] = []
    /// Requests per minute per key (token bucket); 0 turns it off.
    public var rateLimitPerMinute = 120
    /// Renders queued or running at once per key.
    public var rendersPerKey = 4
    /// Renders running at once; also the audio worker threads.
    public var workers = ThreadBudget.machineCores
    /// Renders waiting for a worker before new ones get 503.
    public var queueLimit = 64
    /// Seconds a render or clip is kept.
    public var retentionSeconds: Double = 24 * 3600
    public var maxBodyBytes = 25 * 1_048_576
    public var maxMessages = 200
    public var maxMessageCharacters = 5_000
    public var maxTotalCharacters = 50_000
    /// Longest clip accepted, seconds.
    public var maxClipSeconds = 600.0
    /// Seconds a shutdown (SIGTERM/SIGINT) may take: in-flight renders get this less about 2 s, then the rest are
    /// cancelled (they stay recorded as accepted, and the next start runs them again), and the process exits.
    public var shutdownTimeoutSeconds: Double = 30
    /// Seconds a connection may take to send a complete request head, and may sit idle between requests,
    /// before it is closed (slowloris, forgotten keep-alive connections). Never applies while a request's
    /// body is arriving or its response is being produced (a synchronous render may take minutes).
    public var idleTimeoutSeconds: Double = 60
    /// Provider requests in flight at once, per provider.
    public var providerConcurrency = Chorus.Configuration.defaultProviderConcurrency
    /// Provider keys and base URLs (`ELEVENLABS_API_KEY`, `OPENAI_API_KEY`, …).
    public var environment: [String: String]
    /// The voice providers; `nil` builds the standard ones from `environment`.
    public var registry: VoiceRegistry?
    /// Default voices for speakers without one.
    public var defaultVoices = DefaultVoices.natural
    /// Blobs shared with other instances: `s3://bucket/prefix` (credentials and endpoint from `AWS_*` in
    /// `environment`) or a folder every instance mounts; `nil` keeps everything in the data folder.
    public var storage: String?
    /// The PostgreSQL several instances share (`postgres://user:password@host:port/database?sslmode=…`): the render
    /// index and job queue. Needs `storage` (where the instances share the renders' files). `nil`: this instance alone.
    public var database: String?
    /// Seconds a shared job's claim lasts unless its instance renews it (every third of it); an instance that dies
    /// loses its jobs to the others after this long.
    public var leaseSeconds: Double = 15
    /// With `storage` in a bucket, answer audio requests with a `302` to a presigned URL (CDN-fronted deployments).
    public var redirectAudio = false
    /// The offline Whisper model `/v1/audio/transcriptions` uses, by name in the models folder (`$CHORUS_MODELS_DIR`,
    /// else `$XDG_DATA_HOME/chorus/models`); `nil` (`off`) turns transcription off.
    public var transcriptionModel: String? = WhisperModel.defaultName
    /// The `model` names `/v1/audio/transcriptions` and `/v1/audio/alignments` answer besides the offline model's own,
    /// and who answers each: the offline model (`whisper`; OpenAI's names by default, so the OpenAI SDKs work as they
    /// are) or a remote provider (`openai[:MODEL]`, `elevenlabs[:MODEL]`, keys and base URLs from `environment`).
    public var transcriptionModels = ServiceConfiguration.defaultTranscriptionModels
    /// Log lines as JSON (the default when stdout is not a terminal).
    public var jsonLogs = isatty(STDOUT_FILENO) != 1

    /// The defaults: what `ServiceConfiguration()` and `chorus serve --help` show.
    public static let defaults = ServiceConfiguration(defaultsIn: [:])

    private init(defaultsIn environment: [String: String]) {
        self.environment = environment
        dataDirectory = Self.defaultDataDirectory(environment: environment)
    }

    /// The defaults, overridden by the environment: each `Setting`'s variable (`CHORUS_HOST`, `CHORUS_PORT`, …;
    /// `CHORUS_API_KEYS` is comma-separated, durations are `24h`, `90m`, `3600s`, `CHORUS_REDIRECT_AUDIO` is
    /// `true`/`false`; `CHORUS_API_KEYS_FILE` names a file of keys, one per line), read as `Setting.set` reads it.
    /// - Throws: `ConfigurationError` naming the variable whose value is unusable.
    public init(environment given: [String: String]) throws {
        var environment = given
        // The variable's name before 0.3 (`CHORUS_VOICE_ENGINE`, `piper` for `natural`) still sets the default voices.
        if environment[Setting.defaultVoices.environmentVariable] == nil, let former = environment[Self.formerDefaultVoicesVariable] {
            environment[Setting.defaultVoices.environmentVariable] = former
        }
        self.init(defaultsIn: environment)
        for setting in Setting.allCases {
            guard let text = environment[setting.environmentVariable], !text.isEmpty else { continue }
            do {
                try setting.set(text, in: &self)
            } catch var error as ConfigurationError where error.setting == setting.rawValue {
                error.setting = setting.environmentVariable  // what the user wrote
                throw error
            }
        }
    }

    /// `CHORUS_DEFAULT_VOICES`'s name before 0.3, still read when it is not set.
    public static let formerDefaultVoicesVariable = "CHORUS_VOICE_ENGINE"

    /// `$XDG_DATA_HOME/chorus`, else `~/.local/share/chorus`.
    public static func defaultDataDirectory(environment: [String: String]) -> URL {
        if let xdg = environment["XDG_DATA_HOME"], xdg.hasPrefix("/") { return URL(fileURLWithPath: xdg).appendingPathComponent("chorus") }
        return URL(fileURLWithPath: environment["HOME"] ?? NSHomeDirectory()).appendingPathComponent(".local/share/chorus")
    }

    /// Keys from a file, one per line (blank lines and `#` comments ignored).
    /// - Throws: `ConfigurationError` about `apiKeys` when the file cannot be read.
    public static func keys(fromFile path: String) throws -> [String] {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else {
            throw ConfigurationError(setting: .apiKeys, value: path, reason: "the keys file cannot be read")
        }
        return keys(in: text)
    }

    static func keys(in text: String) -> [String] {
        text.split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty && !$0.hasPrefix("#") }
    }

    /// A model name as `transcriptionModel` takes it: `off` is `.some(nil)`; a name is one folder's name.
    public static func modelName(_ text: String) -> String?? {
        if text.lowercased() == "off" { return .some(nil) }
        guard !text.contains("/"), text != ".", text != "..", text.count <= 100 else { return nil }
        return text
    }

    /// A `model` name of the transcription routes and who answers it.
    public struct TranscriptionRoute: Sendable, Equatable, CustomStringConvertible {
        /// `whisper` (the offline model, `transcriptionModel`), `openai` or `elevenlabs` (`Transcriber.providerNames`).
        public var provider: String
        /// The provider's own model (`gpt-4o-transcribe`, `scribe_v1`; for `whisper` a model folder's name, such as
        /// `whisper-base`); `nil`: its default (for `whisper`, `transcriptionModel`).
        public var model: String?

        public init(provider: String, model: String? = nil) {
            self.provider = provider
            self.model = model
        }

        /// The offline model.
        public static let offline = TranscriptionRoute(provider: "whisper")

        /// `provider` or `provider:model`.
        public var description: String { model.map { "\(provider):\($0)" } ?? provider }
    }

    /// OpenAI's transcription models, answered by the offline model unless configured otherwise.
    public static let defaultTranscriptionModels: [String: TranscriptionRoute] =
        ["whisper-1": .offline, "gpt-4o-transcribe": .offline, "gpt-4o-mini-transcribe": .offline]

    /// `NAME=PROVIDER[:MODEL],…` as `transcriptionModels` takes it (`gpt-4o-transcribe=openai:gpt-4o-transcribe,scribe=elevenlabs`),
    /// in order; `NAME=off` takes a name away (`nil`). Provider names are checked by `validate()`.
    public static func transcriptionModels(_ text: String) -> [(String, TranscriptionRoute?)]? {
        var entries: [(String, TranscriptionRoute?)] = []
        for entry in text.split(separator: ",") {
            let parts = entry.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
            guard parts.count == 2, !parts[0].isEmpty, parts[0].count <= TranscriptionRequest.maxModelCharacters,
                !parts[0].contains(where: \.isWhitespace), !parts[1].isEmpty
            else { return nil }
            if parts[1].lowercased() == "off" {
                entries.append((parts[0], nil))
                continue
            }
            let target = parts[1].split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
            guard !target[0].isEmpty, target.count == 1 || !target[1].isEmpty else { return nil }
            entries.append((parts[0], TranscriptionRoute(provider: target[0], model: target.count == 2 ? target[1] : nil)))
        }
        return entries.isEmpty ? nil : entries
    }

    /// `90`, `90s`, `15m`, `24h`, `7d` as seconds.
    public static func seconds(_ text: String) -> Double? {
        let units: [Character: Double] = ["s": 1, "m": 60, "h": 3600, "d": 86_400]
        if let unit = text.last.flatMap({ units[$0] }) { return Double(text.dropLast()).map { $0 * unit }.flatMap { $0 > 0 ? $0 : nil } }
        return Double(text).flatMap { $0 > 0 ? $0 : nil }
    }

    /// What `--lease` may be, seconds.
    public static let leaseRange = 3.0...600.0

    /// What `--idle-timeout` may be, seconds.
    public static let idleTimeoutRange = 0.1...3_600.0

    /// True for `localhost`, `127.0.0.0/8` and `::1`.
    public var isLoopback: Bool {
        host == "localhost" || host == "::1" || host == "[::1]" || host.hasPrefix("127.")
    }

    /// Refuses settings that cannot work, and an open service (no keys) on a non-loopback host.
    /// - Throws: `ConfigurationError` naming the setting (`Setting`) and, in its reason, any other it depends on.
    public func validate() throws {
        if apiKeys.isEmpty && !isLoopback {
            throw ConfigurationError(
                setting: .host, value: host,
                reason: "no API keys are configured, so the service may only listen on a loopback address (set `apiKeys`)")
        }
        if apiKeys.contains(where: { $0.count < 16 }) {
            throw ConfigurationError(setting: .apiKeys, value: "…", reason: "every key must be at least 16 characters")
        }
        if let refused = Setting.allCases.lazy.compactMap({ $0.refusal(in: self) }).first { throw refused }
        if redirectAudio && storage?.hasPrefix("s3://") != true {
            throw ConfigurationError(setting: .redirectAudio, value: storage ?? "(no storage)", reason: "needs `storage` set to s3://bucket/prefix")
        }
        if let database {
            _ = try DatabaseLocation(url: database)
            if storage == nil {
                throw ConfigurationError(
                    setting: .database, value: DatabaseLocation.masked(database),
                    reason: "needs `storage` (s3://bucket/prefix or a shared folder): the instances share the renders' files there")
            }
        }
        for (name, route) in transcriptionModels.sorted(by: { $0.key < $1.key }) {
            guard Transcriber.providerNames.contains(route.provider) else {
                throw ConfigurationError(
                    setting: .transcriptionModels, value: "\(name)=\(route)",
                    reason: "no speech-to-text provider \"\(route.provider)\" (known: \(Transcriber.providerNames.joined(separator: ", ")))")
            }
            if route.provider == TranscriptionRoute.offline.provider, let model = route.model,
                Self.modelName(model) == nil || model.lowercased() == "off"
            {
                throw ConfigurationError(
                    setting: .transcriptionModels, value: "\(name)=\(route)",
                    reason: "whisper:MODEL names a model folder in the models folder (whisper alone: the offline model, `transcriptionModel`)")
            }
        }
    }

    /// What `maxBodyBytes` may be: 1 KiB to 4 GiB.
    public static let bodyBytesRange = 1_024...(4_096 * 1_048_576)
}

extension ServiceConfiguration: CustomStringConvertible, CustomReflectable {
    /// The settings without any key (API keys are counted, provider keys left out).
    public var description: String {
        "ServiceConfiguration(host: \(host), port: \(port), data: \(dataDirectory.path), api keys: \(apiKeys.count), workers: \(workers), "
            + "queue: \(queueLimit), rate limit: \(rateLimitPerMinute)/min, renders per key: \(rendersPerKey), retention: \(Int(retentionSeconds)) s"
            + (storage.map { ", storage: \($0)" } ?? "")
            + (database.map { ", database: \(DatabaseLocation.masked($0))" } ?? "") + ")"
    }

    /// Reflection (`dump`, `String(reflecting:)`) shows the description only, never the keys.
    public var customMirror: Mirror { Mirror(self, children: ["description": description]) }
}

/// A setting that cannot be used: `setting` is the `ServiceConfiguration` field (`Setting.rawValue`: `dataDirectory`,
/// `storage`), or the environment variable whose value it is (`CHORUS_PORT`, `AWS_ACCESS_KEY_ID`); other settings the
/// reason names are written in backticks (`` `storage` ``). The CLI shows each field as its flag (`--data-dir`).
public struct ConfigurationError: Error, CustomStringConvertible, Sendable {
    public var setting: String
    public var value: String
    public var reason = "is not a valid value"
    public var description: String { "\(setting) \(value): \(reason)" }

    public init(setting: String, value: String, reason: String = "is not a valid value") {
        self.setting = setting
        self.value = value
        self.reason = reason
    }

    public init(setting: ServiceConfiguration.Setting, value: String, reason: String = "is not a valid value") {
        self.init(setting: setting.rawValue, value: value, reason: reason)
    }
}
