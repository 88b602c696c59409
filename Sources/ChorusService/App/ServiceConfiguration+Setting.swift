import ChorusConversation
import ChorusSpeech
import ChorusWire
import Foundation

extension ServiceConfiguration {
    /// The settings a user sets: the one table of them. Each has its field name (what `ConfigurationError` names), its
    /// environment variable, its `chorus serve` flag, its help, how its text is read, the range it may take and how its
    /// value is shown. `init(environment:)` reads the variables through it, `chorus serve` declares its options from it
    /// and sets them through it, `validate()` checks its ranges, and docs/cli.md's table is `markdownTable`
    /// (`ServiceSettingsTests` holds the command, the environment and the docs to it).
    public enum Setting: String, CaseIterable, Sendable {
        case host, port, dataDirectory, apiKeys, apiKeysFile, rateLimitPerMinute, rendersPerKey, workers, queueLimit, retentionSeconds
        case maxBodyBytes, maxMessages, maxMessageCharacters, maxTotalCharacters, maxClipSeconds
        case shutdownTimeoutSeconds, idleTimeoutSeconds, providerConcurrency, defaultVoices, storage, redirectAudio, database, leaseSeconds
        case transcriptionModel, transcriptionModels

        /// The environment variable that sets it (`CHORUS_…`).
        public var environmentVariable: String { facts.variable }

        /// Its `chorus serve` flag (`--port`); `nil` for the API keys themselves (a command line is visible to every
        /// user of the machine: they come from the environment or a file).
        public var flag: String? { facts.flag }

        /// What it does, one line (Markdown code spans allowed).
        public var help: String { facts.help }

        /// Whether it is a switch (a flag without a value; `true`/`false`, `1`/`0`, `yes`/`no` in the environment).
        public var isSwitch: Bool { if case .toggle = facts.value { return true } else { return false } }

        /// Its default as `chorus serve --help` and the docs show it (`24h`, `cores`, `—` for none).
        public var shownDefault: String { facts.shownDefault ?? shown(in: .defaults) }

        /// A value other than its default that it takes (what `ServiceSettingsTests` sets it to).
        public var example: String { facts.example }

        /// Sets it in `configuration` from `text` as the environment and the flag write it (`90s`, `25` MB, `off`).
        /// - Throws: `ConfigurationError` naming it when `text` is not such a value (ranges are `validate()`'s).
        public func set(_ text: String, in configuration: inout ServiceConfiguration) throws {
            func refuse(_ reason: String) -> ConfigurationError { ConfigurationError(setting: self, value: text, reason: reason) }
            switch facts.value {
            case .text(let path):
                configuration[keyPath: path] = text
            case .optionalText(let path):
                configuration[keyPath: path] = text
            case .count(let path, _, let unit):
                guard let count = Int(text), count <= Int.max / unit, count >= Int.min / unit else { throw refuse("is not a whole number") }
                configuration[keyPath: path] = count * unit
            case .seconds(let path, _):
                guard let seconds = ServiceConfiguration.seconds(text) else { throw refuse("is not a duration (such as 90s, 15m, 24h)") }
                configuration[keyPath: path] = seconds
            case .toggle(let path):
                switch text.lowercased() {
                case "1", "true", "yes": configuration[keyPath: path] = true
                case "0", "false", "no": configuration[keyPath: path] = false
                default: throw refuse("is not true or false")
                }
            case .custom(let set, _):
                try set(text, &configuration)
            }
        }

        /// Its value in `configuration` as `chorus serve --check` prints it (keys counted, never shown; a database's
        /// password masked).
        public func shown(in configuration: ServiceConfiguration) -> String {
            switch facts.value {
            case .text(let path): return configuration[keyPath: path]
            case .optionalText(let path): return configuration[keyPath: path] ?? "—"
            case .count(let path, _, let unit): return String(configuration[keyPath: path] / unit)
            case .seconds(let path, _): return ServiceConfiguration.duration(configuration[keyPath: path])
            case .toggle(let path): return configuration[keyPath: path] ? "on" : "off"
            case .custom(_, let show): return show(configuration)
            }
        }

        /// The range check of `validate()`: `nil` when the value in `configuration` is in its range (or it has none).
        func refusal(in configuration: ServiceConfiguration) -> ConfigurationError? {
            switch facts.value {
            case .count(let path, let range, _):
                let value = configuration[keyPath: path]
                guard !range.contains(value) else { return nil }
                return ConfigurationError(setting: self, value: String(value), reason: "must be between \(range.lowerBound) and \(range.upperBound)")
            case .seconds(let path, let range?):
                let value = configuration[keyPath: path]
                guard !range.contains(value) else { return nil }
                let lower = range.lowerBound == range.lowerBound.rounded() ? "\(Int(range.lowerBound))" : "\(range.lowerBound)"
                return ConfigurationError(setting: self, value: "\(value)s", reason: "must be between \(lower) s and \(Int(range.upperBound)) s")
            default:
                return nil
            }
        }

        /// How a setting's text becomes its value, and where the value lives.
        enum Value {
            case text(WritableKeyPath<ServiceConfiguration, String>)
            case optionalText(WritableKeyPath<ServiceConfiguration, String?>)
            /// A whole number in `unit`s (the body's megabytes), kept in the field times `unit`, within `range` (field units).
            case count(WritableKeyPath<ServiceConfiguration, Int>, range: ClosedRange<Int>, unit: Int = 1)
            /// A duration (`90`, `90s`, `15m`, `24h`, `7d`, over 0), within `range` when there is one.
            case seconds(WritableKeyPath<ServiceConfiguration, Double>, range: ClosedRange<Double>?)
            case toggle(WritableKeyPath<ServiceConfiguration, Bool>)
            /// Read and shown its own way.
            case custom((String, inout ServiceConfiguration) throws -> Void, shown: (ServiceConfiguration) -> String)
        }

        struct Facts {
            var flag: String?
            var variable: String
            var help: String
            var value: Value
            var example: String
            /// The default shown when it is not the default configuration's value as `shown(in:)` writes it.
            var shownDefault: String? = nil
        }

        // swiftlint:disable:next function_body_length
        var facts: Facts {
            typealias C = ServiceConfiguration
            switch self {
            case .host:
                return Facts(
                    flag: "--host", variable: "CHORUS_HOST", help: "Address to listen on (without API keys, loopback only)",
                    value: .text(\.host), example: "localhost")
            case .port:
                return Facts(flag: "--port", variable: "CHORUS_PORT", help: "Port", value: .count(\.port, range: 0...65_535), example: "9090")
            case .dataDirectory:
                return Facts(
                    flag: "--data-dir", variable: "CHORUS_DATA_DIR", help: "Renders, clips, state and the voice cache",
                    value: .custom(
                        { text, configuration in configuration.dataDirectory = URL(fileURLWithPath: text) },
                        shown: { $0.dataDirectory.path }),
                    example: "/srv/chorus", shownDefault: "`$XDG_DATA_HOME/chorus`, else `~/.local/share/chorus`")
            case .apiKeys:
                return Facts(
                    flag: nil, variable: "CHORUS_API_KEYS",
                    help: "Bearer keys clients may use, comma-separated (16 characters or more each); none: open, on a loopback host only",
                    value: .custom(
                        { text, configuration in configuration.apiKeys = C.keys(in: text.replacingOccurrences(of: ",", with: "\n")) },
                        shown: { $0.apiKeys.isEmpty ? "—" : "\($0.apiKeys.count) key\($0.apiKeys.count == 1 ? "" : "s")" }),
                    example: "a-key-of-sixteen-chars")
            case .apiKeysFile:
                return Facts(
                    flag: "--api-keys-file", variable: "CHORUS_API_KEYS_FILE", help: "File with one API key per line, added to `CHORUS_API_KEYS`",
                    value: .custom({ text, configuration in configuration.apiKeys += try C.keys(fromFile: text) }, shown: { _ in "—" }),
                    example: "keys.txt")
            case .rateLimitPerMinute:
                return Facts(
                    flag: "--rate-limit", variable: "CHORUS_RATE_LIMIT", help: "Requests per minute per key, 0 for no limit",
                    value: .count(\.rateLimitPerMinute, range: 0...1_000_000), example: "600")
            case .rendersPerKey:
                return Facts(
                    flag: "--key-renders", variable: "CHORUS_KEY_RENDERS", help: "Renders queued or running at once per key",
                    value: .count(\.rendersPerKey, range: 1...10_000), example: "8")
            case .workers:
                return Facts(
                    flag: "--workers", variable: "CHORUS_WORKERS", help: "Renders running at once, and audio worker threads",
                    value: .count(\.workers, range: 1...256), example: "3", shownDefault: "cores")
            case .queueLimit:
                return Facts(
                    flag: "--queue", variable: "CHORUS_QUEUE",
                    help: "Renders waiting before new ones get `503` (and, apart, transcriptions waiting or running)",
                    value: .count(\.queueLimit, range: 0...100_000), example: "16")
            case .retentionSeconds:
                return Facts(
                    flag: "--retention", variable: "CHORUS_RETENTION", help: "How long renders and clips are kept",
                    value: .seconds(\.retentionSeconds, range: nil), example: "7d")
            case .maxBodyBytes:
                return Facts(
                    flag: "--max-body-mb", variable: "CHORUS_MAX_BODY_MB", help: "Largest request body in MB",
                    value: .count(\.maxBodyBytes, range: C.bodyBytesRange, unit: 1_048_576), example: "100")
            case .maxMessages:
                return Facts(
                    flag: "--max-messages", variable: "CHORUS_MAX_MESSAGES", help: "Most messages in one render",
                    value: .count(\.maxMessages, range: 1...100_000), example: "500")
            case .maxMessageCharacters:
                return Facts(
                    flag: "--max-message-chars", variable: "CHORUS_MAX_MESSAGE_CHARS", help: "Most characters in one message's text",
                    value: .count(\.maxMessageCharacters, range: 1...1_000_000), example: "8000")
            case .maxTotalCharacters:
                return Facts(
                    flag: "--max-total-chars", variable: "CHORUS_MAX_TOTAL_CHARS", help: "Most characters in all of one render's texts",
                    value: .count(\.maxTotalCharacters, range: 1...10_000_000), example: "200000")
            case .maxClipSeconds:
                return Facts(
                    flag: "--max-clip", variable: "CHORUS_MAX_CLIP", help: "Longest clip or audio to transcribe",
                    value: .seconds(\.maxClipSeconds, range: 1...86_400), example: "30m")
            case .shutdownTimeoutSeconds:
                return Facts(
                    flag: "--shutdown-timeout", variable: "CHORUS_SHUTDOWN_TIMEOUT", help: "Time to finish in-flight renders and exit on `SIGTERM`",
                    value: .seconds(\.shutdownTimeoutSeconds, range: nil), example: "2m")
            case .idleTimeoutSeconds:
                return Facts(
                    flag: "--idle-timeout", variable: "CHORUS_IDLE_TIMEOUT",
                    help: "Time a connection gets to send a request head, or may sit idle between requests",
                    value: .seconds(\.idleTimeoutSeconds, range: C.idleTimeoutRange), example: "20s")
            case .providerConcurrency:
                let range = Chorus.Configuration.concurrencyRange
                return Facts(
                    flag: "--concurrency", variable: "CHORUS_CONCURRENCY", help: "Provider requests in flight at once, per provider",
                    value: .count(\.providerConcurrency, range: range.lowerBound...range.upperBound), example: "2")
            case .defaultVoices:
                let sets = DefaultVoices.allCases.map(\.rawValue)
                return Facts(
                    flag: "--default-voices", variable: "CHORUS_DEFAULT_VOICES",
                    help:
                        "Default voices for speakers without one: `natural` (the natural Kokoro and Piper voices, then Flite's and espeak-ng's), `flite` (Flite's, then espeak-ng's) or `espeak`",
                    value: .custom(
                        { text, configuration in
                            guard let voices = DefaultVoices(name: text) else {
                                throw ConfigurationError(
                                    setting: .defaultVoices, value: text, reason: "is not one of \(sets.joined(separator: ", "))")
                            }
                            configuration.defaultVoices = voices
                        }, shown: { $0.defaultVoices.rawValue }),
                    example: "flite")
            case .storage:
                return Facts(
                    flag: "--storage", variable: "CHORUS_STORAGE",
                    help:
                        "Blobs several instances share: `s3://bucket/prefix` (`AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`, `AWS_REGION`, `AWS_ENDPOINT_URL_S3`) or a folder they all mount",
                    value: .optionalText(\.storage), example: "s3://bucket/chorus")
            case .redirectAudio:
                return Facts(
                    flag: "--redirect-audio", variable: "CHORUS_REDIRECT_AUDIO",
                    help: "With `--storage s3://…`, answer audio requests with a `302` to a presigned URL", value: .toggle(\.redirectAudio),
                    example: "true")
            case .database:
                return Facts(
                    flag: "--database", variable: "CHORUS_DATABASE_URL",
                    help:
                        "PostgreSQL several instances share (render index and job queue): `postgres://user:password@host:port/database?sslmode=require`; needs `--storage`",
                    value: .custom(
                        { text, configuration in configuration.database = text }, shown: { $0.database.map(DatabaseLocation.masked) ?? "—" }),
                    example: "postgres://chorus:secret@db:5432/chorus")
            case .leaseSeconds:
                return Facts(
                    flag: "--lease", variable: "CHORUS_LEASE",
                    help: "How long a shared job's claim lasts unless renewed (every third of it); a dead instance's jobs move to another after it",
                    value: .seconds(\.leaseSeconds, range: C.leaseRange), example: "30s")
            case .transcriptionModel:
                return Facts(
                    flag: "--transcription-model", variable: "CHORUS_TRANSCRIPTION_MODEL",
                    help: "Offline Whisper model of `/v1/audio/transcriptions`, by name in the models folder (`$CHORUS_MODELS_DIR`), or `off`",
                    value: .custom(
                        { text, configuration in
                            guard let name = C.modelName(text) else {
                                throw ConfigurationError(
                                    setting: .transcriptionModel, value: text, reason: "give a model's folder name in the models folder, or off")
                            }
                            configuration.transcriptionModel = name
                        }, shown: { $0.transcriptionModel ?? "off" }),
                    example: "whisper-base")
            case .transcriptionModels:
                return Facts(
                    flag: "--transcription-models", variable: "CHORUS_TRANSCRIPTION_MODELS",
                    help:
                        "Who answers a transcription `model` name: `NAME=whisper` (the offline model), `NAME=openai[:MODEL]` or `NAME=elevenlabs[:MODEL]` (keys from `OPENAI_API_KEY`, `ELEVENLABS_API_KEY`), `NAME=off`; comma-separated, over the defaults",
                    value: .custom(
                        { text, configuration in
                            guard let entries = C.transcriptionModels(text) else {
                                throw ConfigurationError(
                                    setting: .transcriptionModels, value: text, reason: "give NAME=PROVIDER[:MODEL] or NAME=off, comma-separated")
                            }
                            for (name, route) in entries { configuration.transcriptionModels[name] = route }
                        },
                        shown: { configuration in
                            Dictionary(grouping: configuration.transcriptionModels.keys.sorted()) {
                                configuration.transcriptionModels[$0]!.description
                            }
                            .sorted { $0.key < $1.key }.map { "\($0.value.joined(separator: ", ")) → \($0.key)" }.joined(separator: "; ")
                        }),
                    example: "whisper-1=whisper:whisper-base")
            }
        }

        /// docs/cli.md's table of `chorus serve`'s settings.
        public static var markdownTable: String {
            var lines = ["| flag | environment | default | what |", "|---|---|---|---|"]
            for setting in allCases {
                let flag = setting.flag.map { "`\($0)`" } ?? "—"
                let shown = setting.shownDefault  // a value in code type, a description (`cores`, a list) as written
                let value = setting.facts.shownDefault != nil || shown == "—" || shown.contains("→") ? shown : "`\(shown)`"
                lines.append("| \(flag) | `\(setting.environmentVariable)` | \(value) | \(setting.help) |")
            }
            return lines.joined(separator: "\n")
        }
    }

    /// `30s`, `24h`: a duration as the settings take it (whole hours or minutes where it is one).
    public static func duration(_ seconds: Double) -> String {
        if seconds >= 3600, seconds.truncatingRemainder(dividingBy: 3600) == 0 { return "\(Int(seconds / 3600))h" }
        if seconds >= 60, seconds.truncatingRemainder(dividingBy: 60) == 0 { return "\(Int(seconds / 60))m" }
        return seconds == seconds.rounded() ? "\(Int(seconds))s" : "\(seconds)s"
    }
}
