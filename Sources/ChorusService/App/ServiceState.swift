import ChorusAudio
import ChorusConversation
import ChorusInference
import ChorusListening
import ChorusSpeech
import ChorusSupport
import ChorusVoiceMaking
import Foundation
import Hummingbird
import Logging

/// What the routes share, wired once at start: settings, the engine, storage, the deployment, the scheduler, the render
/// catalog and the limits. It holds no logic of its own.
struct ServiceState: Sendable {
    let configuration: ServiceConfiguration
    let chorus: Chorus
    let data: DataDirectory
    /// This process's hold on the data folder (held as long as the state).
    let folderLock: DataFolderLock
    let clips: ClipStore
    let renders: RenderStore
    /// Pronunciation lexicons stored per key (in the embedded database, or PostgreSQL when shared).
    let lexicons: LexiconStore
    /// The embedded database behind `renders` and `clips`.
    let local: LocalDatabase
    /// Blobs shared with other instances (`--storage`), if any.
    let shared: SharedStorage?
    /// Alone, or one of several instances on a PostgreSQL (`--database`).
    let deployment: Deployment
    let scheduler: RenderScheduler
    /// Where a render is: running here, queued or running elsewhere, finished.
    let catalog: RenderCatalog
    let resolver: RenderRequestResolver
    let files: FileResponder
    let metrics: ServiceMetrics
    /// Signs the links a player page uses (secret in `<data>/signing.key`).
    let signer: URLSigner
    /// Who may call `/v1` (keys, signed links), and how often (per key).
    let authenticator: AuthenticationMiddleware
    let limiter: RateLimiter
    /// The offline recognizer behind `/v1/audio/transcriptions` and its queue.
    let recognition: SpeechRecognition
    /// Transcripts by audio bytes and model, in the data folder's cache.
    let transcripts: TranscriptCache
    /// Voices being made from uploaded recordings (`POST /v1/voices/add`), into the models folder's Kokoro voices.
    let workshop: VoiceWorkshop
    /// Who answers each transcription `model` name.
    let transcriptionRoutes: TranscriptionRoutes
    let logger: Logger

    init(configuration: ServiceConfiguration, logger: Logger) async throws {
        self.configuration = configuration
        self.logger = logger
        data = DataDirectory(root: configuration.dataDirectory)
        folderLock = try DataFolderLock(folder: configuration.dataDirectory)
        if let reason = folderLock.notLocked {
            logger.warning("the data folder is not locked: run one chorus serve on it at a time", metadata: ["reason": .string(reason)])
        }
        try data.prepare()
        signer = URLSigner(secret: try URLSigner.secret(in: data.root))
        authenticator = AuthenticationMiddleware(keys: configuration.apiKeys, signer: signer)
        limiter = RateLimiter(perMinute: configuration.rateLimitPerMinute)
        var engine = Chorus.Configuration(
            registry: configuration.registry ?? .standard(environment: configuration.environment),
            cacheDirectory: data.cache, providerConcurrency: configuration.providerConcurrency)
        engine.workerThreads = configuration.workers
        engine.defaultVoices = configuration.defaultVoices
        shared = try configuration.storage.map {
            try SharedStorage.make($0, redirectAudio: configuration.redirectAudio, environment: configuration.environment)
        }
        engine.sharedCache = shared?.cacheTier
        let recognition = SpeechRecognition(
            folder: ModelFolder.root(environment: configuration.environment),
            modelName: configuration.transcriptionModel, threads: ThreadBudget(workers: configuration.workers).whisperLanes,
            limit: max(1, configuration.queueLimit), logger: logger)
        self.recognition = recognition
        engine.transcriber = recognition.transcriber
        chorus = try Chorus(configuration: engine)
        let models = ModelFolder.root(environment: configuration.environment)
        workshop = VoiceWorkshop(
            maker: VoiceMaker(
                kokoro: KokoroModel.folder(environment: configuration.environment), speaker: SpeakerModel.folder(in: models)),
            limit: max(1, min(configuration.queueLimit, 8)))
        transcripts = try TranscriptCache(directory: data.cache)
        transcriptionRoutes = try TranscriptionRoutes(configuration: configuration)
        let local = try await LocalDatabase.open(in: data.root, logger: logger)
        clips = ClipStore(
            folder: data.clips, retention: configuration.retentionSeconds, maxSeconds: configuration.maxClipSeconds,
            pool: chorus.workerPool, database: local, shared: shared)
        self.local = local
        renders = RenderStore(data: data, database: local)
        metrics = ServiceMetrics()
        let resolver = RenderRequestResolver(configuration: configuration, clips: clips, chorus: chorus)
        self.resolver = resolver
        var sharedQueue: RenderScheduler.SharedQueueAccess?
        if let url = configuration.database {
            let database = try PostgresDatabase(location: try DatabaseLocation(url: url), logger: logger)
            let queue = SharedQueue(database: database, instance: UUID().uuidString.lowercased(), lease: configuration.leaseSeconds)
            let watcher = QueueWatcher()
            deployment = .shared(
                Deployment.Shared(
                    database: database, queue: queue, watcher: watcher,
                    rateLimits: SharedRateLimits(database: database, perMinute: configuration.rateLimitPerMinute)))
            sharedQueue = RenderScheduler.SharedQueueAccess(
                queue: queue, watcher: watcher, resolve: { try await resolver.resolve($0) }, logger: logger)
        } else {
            deployment = .single(LocalRateLimits(database: local, limiter: limiter))
        }
        lexicons = LexiconStore(backing: deployment.shared.map { .shared($0.database) } ?? .local(local))
        let executor = RenderExecutor(chorus: chorus, data: data, store: renders, shared: shared, metrics: metrics, logger: logger)
        scheduler = RenderScheduler(
            workers: configuration.workers, queueLimit: configuration.queueLimit,
            perCaller: configuration.rendersPerKey, executor: executor, shared: sharedQueue)
        files = FileResponder(maxAge: Int(configuration.retentionSeconds))
        catalog = RenderCatalog(
            renders: renders, scheduler: scheduler, data: data, shared: shared, queue: deployment.shared?.queue,
            watcher: deployment.shared?.watcher, memory: files.memory, logger: logger)
    }
}
