import ArgumentParser
import ChorusService
import ChorusVoices
import Foundation

struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Run the Chorus HTTP service (renders, speech, clips, voices) until SIGTERM or Ctrl-C.",
        discussion: """
            Every option also has an environment variable (shown in brackets); options win. Provider keys come from \
            ELEVENLABS_API_KEY and OPENAI_API_KEY as for the other commands. Without API keys (CHORUS_API_KEYS or \
            --api-keys-file) the service runs open, and only on a loopback host.

            Example:
              CHORUS_API_KEYS=change-me-to-a-long-secret chorus serve --host 0.0.0.0 --port 8080
            """)

    typealias Setting = ServiceConfiguration.Setting
    private static let defaults = ServiceConfiguration.defaults

    /// `text [VARIABLE]`, the help of the flag of `setting`.
    private static func help(_ text: String, _ setting: Setting) -> ArgumentHelp { ArgumentHelp("\(text) [\(setting.environmentVariable)].") }

    @Option(help: help("Address to listen on. Default \(defaults.host)", .host))
    var host: String?

    @Option(parsing: .unconditional, help: help("Port. Default \(defaults.port)", .port))
    var port: Int?

    @Option(name: .customLong("data-dir"), help: help("Renders, clips and the voice cache. Default $XDG_DATA_HOME/chorus, else ~/.local/share/chorus", .dataDirectory))
    var dataDirectory: String?

    @Option(name: .customLong("api-keys-file"),
            help: ArgumentHelp("File with one API key per line [\(ServiceConfiguration.apiKeysFileVariable)]; \(Setting.apiKeys.environmentVariable) takes comma-separated keys."))
    var apiKeysFile: String?

    @Option(name: .customLong("rate-limit"), parsing: .unconditional,
            help: help("Requests per minute per key, 0 for no limit. Default \(defaults.rateLimitPerMinute)", .rateLimitPerMinute))
    var rateLimit: Int?

    @Option(name: .customLong("key-renders"), parsing: .unconditional,
            help: help("Renders queued or running at once per key. Default \(defaults.rendersPerKey)", .rendersPerKey))
    var keyRenders: Int?

    @Option(parsing: .unconditional, help: help("Renders running at once, and audio worker threads. Default: cores", .workers))
    var workers: Int?

    @Option(parsing: .unconditional, help: help("Renders (and, apart, transcriptions) waiting before new ones get 503. Default \(defaults.queueLimit)", .queueLimit))
    var queue: Int?

    @Option(help: help("How long renders and clips are kept: 24h, 90m, 3600s. Default \(Self.duration(defaults.retentionSeconds))", .retentionSeconds))
    var retention: String?

    @Option(name: .customLong("max-body-mb"), parsing: .unconditional,
            help: help("Largest request body in MB. Default \(defaults.maxBodyBytes / 1_048_576)", .maxBodyBytes))
    var maxBodyMB: Int?

    @Option(name: .customLong("shutdown-timeout"),
            help: help("Time to finish in-flight renders and exit on SIGTERM. Default \(Self.duration(defaults.shutdownTimeoutSeconds))", .shutdownTimeoutSeconds))
    var shutdownTimeout: String?

    @Option(name: .customLong("idle-timeout"),
            help: help("Time a connection gets to send a request head, or may sit idle between requests. Default \(Self.duration(defaults.idleTimeoutSeconds))",
                       .idleTimeoutSeconds))
    var idleTimeout: String?

    @Option(parsing: .unconditional, help: help("Provider requests in flight at once, per provider. Default \(defaults.providerConcurrency)", .providerConcurrency))
    var concurrency: Int?

    @Option(name: .customLong("voice-engine"),
            help: help("Default voices for speakers without one: \(VoiceEngine.allCases.map(\.rawValue).joined(separator: " or ")). Default \(defaults.voiceEngine.rawValue)",
                       .voiceEngine))
    var voiceEngine: String?

    @Option(help: help("Blobs shared by several instances: s3://bucket/prefix (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_REGION, AWS_ENDPOINT_URL_S3) or a folder they all mount",
                       .storage))
    var storage: String?

    @Flag(name: .customLong("redirect-audio"), help: help("With --storage s3://…, answer audio requests with a 302 to a presigned URL", .redirectAudio))
    var redirectAudio = false

    @Option(help: help("PostgreSQL several instances share (render index and job queue): postgres://user:password@host:port/database?sslmode=require; needs --storage",
                       .database))
    var database: String?

    @Option(help: help("How long a shared job's claim lasts unless renewed (every third of it); a dead instance's jobs move to another after it. Default \(Self.duration(defaults.leaseSeconds))",
                       .leaseSeconds))
    var lease: String?

    @Option(name: .customLong("transcription-model"),
            help: help("Offline Whisper model for /v1/audio/transcriptions, by name in the models folder ($CHORUS_MODELS_DIR), or off. Default \(defaults.transcriptionModel ?? "off")",
                       .transcriptionModel))
    var transcriptionModel: String?

    @Option(name: .customLong("transcription-models"),
            help: help("Who answers a /v1/audio/transcriptions model name: NAME=whisper (the offline model), NAME=openai[:MODEL] or NAME=elevenlabs[:MODEL] (keys from OPENAI_API_KEY, ELEVENLABS_API_KEY), NAME=off; comma-separated, over the defaults (whisper-1, gpt-4o-transcribe and gpt-4o-mini-transcribe: whisper)",
                       .transcriptionModels))
    var transcriptionModels: String?

    /// The flag of each setting: library errors name fields (`dataDirectory`), the command line shows flags.
    static let flags: [Setting: String] = [
        .host: "--host", .port: "--port", .dataDirectory: "--data-dir", .apiKeys: "--api-keys-file", .rateLimitPerMinute: "--rate-limit",
        .rendersPerKey: "--key-renders", .workers: "--workers", .queueLimit: "--queue", .retentionSeconds: "--retention",
        .maxBodyBytes: "--max-body-mb", .shutdownTimeoutSeconds: "--shutdown-timeout", .idleTimeoutSeconds: "--idle-timeout",
        .providerConcurrency: "--concurrency", .voiceEngine: "--voice-engine", .storage: "--storage", .redirectAudio: "--redirect-audio",
        .database: "--database", .leaseSeconds: "--lease", .transcriptionModel: "--transcription-model",
        .transcriptionModels: "--transcription-models",
    ]

    /// `error` with its setting and every setting its reason names (`` `storage` ``) written as flags.
    static func described(_ error: ConfigurationError) -> String {
        var reason = error.reason
        for (setting, flag) in flags { reason = reason.replacingOccurrences(of: "`\(setting.rawValue)`", with: flag) }
        let setting = Setting(rawValue: error.setting).flatMap { flags[$0] } ?? error.setting
        return "\(setting) \(error.value): \(reason)"
    }

    /// `30s`, `24h`: a duration as the flags take it.
    static func duration(_ seconds: Double) -> String {
        if seconds >= 3600, seconds.truncatingRemainder(dividingBy: 3600) == 0 { return "\(Int(seconds / 3600))h" }
        if seconds >= 60, seconds.truncatingRemainder(dividingBy: 60) == 0 { return "\(Int(seconds / 60))m" }
        return "\(Int(seconds))s"
    }

    func run() async throws {
        var configuration: ServiceConfiguration
        do {
            configuration = try ServiceConfiguration(environment: ProcessInfo.processInfo.environment)
            if let host { configuration.host = host }
            if let port { configuration.port = port }
            if let dataDirectory { configuration.dataDirectory = URL(fileURLWithPath: dataDirectory) }
            if let apiKeysFile { configuration.apiKeys += try ServiceConfiguration.keys(fromFile: apiKeysFile) }
            if let rateLimit { configuration.rateLimitPerMinute = rateLimit }
            if let keyRenders { configuration.rendersPerKey = keyRenders }
            if let workers { configuration.workers = workers }
            if let queue { configuration.queueLimit = queue }
            if let retention { configuration.retentionSeconds = try Self.seconds("--retention", retention, example: "24h, 90m or 3600s") }
            if let maxBodyMB { configuration.maxBodyBytes = maxBodyMB * 1_048_576 }
            if let shutdownTimeout { configuration.shutdownTimeoutSeconds = try Self.seconds("--shutdown-timeout", shutdownTimeout, example: "30s") }
            if let idleTimeout { configuration.idleTimeoutSeconds = try Self.seconds("--idle-timeout", idleTimeout, example: "60s") }
            if let concurrency { configuration.providerConcurrency = concurrency }
            if let storage { configuration.storage = storage }
            if redirectAudio { configuration.redirectAudio = true }
            if let database { configuration.database = database }
            if let lease { configuration.leaseSeconds = try Self.seconds("--lease", lease, example: "15s") }
            if let transcriptionModel {
                guard let name = ServiceConfiguration.modelName(transcriptionModel) else {
                    throw ValidationError("--transcription-model \(transcriptionModel): give a model's folder name in the models folder, or off")
                }
                configuration.transcriptionModel = name
            }
            if let transcriptionModels {
                guard let entries = ServiceConfiguration.transcriptionModels(transcriptionModels) else {
                    throw ValidationError("--transcription-models \(transcriptionModels): give NAME=PROVIDER[:MODEL] or NAME=off, comma-separated")
                }
                for (name, route) in entries { configuration.transcriptionModels[name] = route }
            }
            if let voiceEngine {
                guard let engine = VoiceEngine(rawValue: voiceEngine) else {
                    throw ValidationError("--voice-engine \(voiceEngine): use \(VoiceEngine.allCases.map(\.rawValue).joined(separator: " or "))")
                }
                configuration.voiceEngine = engine
            }
            try configuration.validate()
        } catch let error as ConfigurationError {
            throw ValidationError(Self.described(error))
        }
        try await reportingErrors {
            do {
                try await ChorusServer(configuration: configuration).run()
            } catch let error as ConfigurationError {
                Terminal.error(Self.described(error))   // found at start (the data folder in use, the database unusable): not a usage error
                throw ExitCode.failure
            }
        }
    }

    /// A duration flag (`90`, `90s`, `15m`, `24h`) as seconds, or a usage error naming the flag.
    static func seconds(_ flag: String, _ text: String, example: String) throws -> Double {
        guard let seconds = ServiceConfiguration.seconds(text) else { throw ValidationError("\(flag) \(text): use e.g. \(example)") }
        return seconds
    }
}
