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

    @Option(help: "Address to listen on [CHORUS_HOST]. Default 127.0.0.1.")
    var host: String?

    @Option(parsing: .unconditional, help: "Port [CHORUS_PORT]. Default 8080.")
    var port: Int?

    @Option(name: .customLong("data-dir"), help: "Renders, clips and the voice cache [CHORUS_DATA_DIR]. Default $XDG_DATA_HOME/chorus, else ~/.local/share/chorus.")
    var dataDirectory: String?

    @Option(name: .customLong("api-keys-file"), help: "File with one API key per line [CHORUS_API_KEYS_FILE]; CHORUS_API_KEYS takes comma-separated keys.")
    var apiKeysFile: String?

    @Option(name: .customLong("rate-limit"), parsing: .unconditional, help: "Requests per minute per key, 0 for no limit [CHORUS_RATE_LIMIT]. Default 120.")
    var rateLimit: Int?

    @Option(name: .customLong("key-renders"), parsing: .unconditional, help: "Renders queued or running at once per key [CHORUS_KEY_RENDERS]. Default 4.")
    var keyRenders: Int?

    @Option(parsing: .unconditional, help: "Renders running at once, and audio worker threads [CHORUS_WORKERS]. Default: cores.")
    var workers: Int?

    @Option(parsing: .unconditional, help: "Renders waiting before new ones get 503 [CHORUS_QUEUE]. Default 64.")
    var queue: Int?

    @Option(help: "How long renders and clips are kept: 24h, 90m, 3600s [CHORUS_RETENTION]. Default 24h.")
    var retention: String?

    @Option(name: .customLong("max-body-mb"), parsing: .unconditional, help: "Largest request body in MB [CHORUS_MAX_BODY_MB]. Default 25.")
    var maxBodyMB: Int?

    @Option(name: .customLong("shutdown-timeout"), help: "Time to finish in-flight renders and exit on SIGTERM: 30s [CHORUS_SHUTDOWN_TIMEOUT].")
    var shutdownTimeout: String?

    @Option(name: .customLong("idle-timeout"), help: "Time a connection gets to send a request head, or may sit idle between requests: 60s [CHORUS_IDLE_TIMEOUT].")
    var idleTimeout: String?

    @Option(parsing: .unconditional, help: "Provider requests in flight at once, per provider [CHORUS_CONCURRENCY]. Default 4.")
    var concurrency: Int?

    @Option(name: .customLong("voice-engine"), help: "Default voices for speakers without one: flite or espeak [CHORUS_VOICE_ENGINE]. Default flite.")
    var voiceEngine: String?

    @Option(help: "Blobs shared by several instances: s3://bucket/prefix (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_REGION, AWS_ENDPOINT_URL_S3) or a folder they all mount [CHORUS_STORAGE].")
    var storage: String?

    @Flag(name: .customLong("redirect-audio"), help: "With --storage s3://…, answer audio requests with a 302 to a presigned URL [CHORUS_REDIRECT_AUDIO].")
    var redirectAudio = false

    @Option(help: "PostgreSQL several instances share (render index and job queue): postgres://user:password@host:port/database?sslmode=require; needs --storage [CHORUS_DATABASE_URL].")
    var database: String?

    @Option(help: "How long a shared job's claim lasts unless renewed (every third of it); a dead instance's jobs move to another after it [CHORUS_LEASE]. Default 15s.")
    var lease: String?

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
            if let voiceEngine {
                guard let engine = VoiceEngine(rawValue: voiceEngine) else { throw ValidationError("--voice-engine \(voiceEngine): use flite or espeak") }
                configuration.voiceEngine = engine
            }
            try configuration.validate()
        } catch let error as ConfigurationError {
            throw ValidationError(error.description)
        }
        try await reportingErrors {
            try await ChorusServer(configuration: configuration).run()
        }
    }

    /// A duration flag (`90`, `90s`, `15m`, `24h`) as seconds, or a usage error naming the flag.
    static func seconds(_ flag: String, _ text: String, example: String) throws -> Double {
        guard let seconds = ServiceConfiguration.seconds(text) else { throw ValidationError("\(flag) \(text): use e.g. \(example)") }
        return seconds
    }
}
