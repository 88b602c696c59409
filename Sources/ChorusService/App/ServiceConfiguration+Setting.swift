extension ServiceConfiguration {
    /// The settings a user sets, by field name (what `ConfigurationError` names), each with its environment variable
    /// (read by `init(environment:)`). The CLI adds a flag for each (`chorus serve --help`).
    public enum Setting: String, CaseIterable, Sendable {
        case host, port, dataDirectory, apiKeys, rateLimitPerMinute, rendersPerKey, workers, queueLimit, retentionSeconds, maxBodyBytes
        case shutdownTimeoutSeconds, idleTimeoutSeconds, providerConcurrency, voiceEngine, storage, redirectAudio, database, leaseSeconds
        case transcriptionModel, transcriptionModels

        /// The environment variable that sets it (`CHORUS_…`).
        public var environmentVariable: String {
            switch self {
            case .host: return "CHORUS_HOST"
            case .port: return "CHORUS_PORT"
            case .dataDirectory: return "CHORUS_DATA_DIR"
            case .apiKeys: return "CHORUS_API_KEYS"
            case .rateLimitPerMinute: return "CHORUS_RATE_LIMIT"
            case .rendersPerKey: return "CHORUS_KEY_RENDERS"
            case .workers: return "CHORUS_WORKERS"
            case .queueLimit: return "CHORUS_QUEUE"
            case .retentionSeconds: return "CHORUS_RETENTION"
            case .maxBodyBytes: return "CHORUS_MAX_BODY_MB"
            case .shutdownTimeoutSeconds: return "CHORUS_SHUTDOWN_TIMEOUT"
            case .idleTimeoutSeconds: return "CHORUS_IDLE_TIMEOUT"
            case .providerConcurrency: return "CHORUS_CONCURRENCY"
            case .voiceEngine: return "CHORUS_VOICE_ENGINE"
            case .storage: return "CHORUS_STORAGE"
            case .redirectAudio: return "CHORUS_REDIRECT_AUDIO"
            case .database: return "CHORUS_DATABASE_URL"
            case .leaseSeconds: return "CHORUS_LEASE"
            case .transcriptionModel: return "CHORUS_TRANSCRIPTION_MODEL"
            case .transcriptionModels: return "CHORUS_TRANSCRIPTION_MODELS"
            }
        }
    }
}
