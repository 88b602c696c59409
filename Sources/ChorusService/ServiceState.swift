import ChorusAudio
import ChorusVoices
import Foundation
import Hummingbird
import Logging

/// What the routes share: settings, the engine, storage, the scheduler and the limits.
struct ServiceState: Sendable {
    static let version = "0.2.0"

    let configuration: ServiceConfiguration
    let chorus: Chorus
    let data: DataDirectory
    let clips: ClipStore
    let renders: RenderStore
    let scheduler: RenderScheduler
    let resolver: RenderRequestResolver
    let files: FileResponder
    let metrics: ServiceMetrics
    /// Signs the links a player page uses (secret in `<data>/signing.key`).
    let signer: URLSigner
    let logger: Logger

    init(configuration: ServiceConfiguration, logger: Logger) throws {
        self.configuration = configuration
        self.logger = logger
        data = DataDirectory(root: configuration.dataDirectory)
        try data.prepare()
        signer = URLSigner(secret: try URLSigner.secret(in: data.root))
        var engine = Chorus.Configuration(registry: configuration.registry ?? .standard(environment: configuration.environment),
                                          cacheDirectory: data.cache, providerConcurrency: configuration.providerConcurrency)
        engine.workerThreads = configuration.workers
        engine.voiceEngine = configuration.voiceEngine
        chorus = try Chorus(configuration: engine)
        clips = ClipStore(folder: data.clips, retention: configuration.retentionSeconds, maxSeconds: configuration.maxClipSeconds,
                          pool: chorus.workerPool)
        renders = RenderStore(data: data)
        metrics = ServiceMetrics()
        let executor = RenderExecutor(chorus: chorus, data: data, store: renders, metrics: metrics, logger: logger)
        scheduler = RenderScheduler(workers: configuration.workers, queueLimit: configuration.queueLimit,
                                    perCaller: configuration.rendersPerKey, executor: executor)
        resolver = RenderRequestResolver(configuration: configuration, clips: clips, chorus: chorus)
        files = FileResponder(fileIO: FileIO(), maxAge: Int(configuration.retentionSeconds))
    }

    /// A render by id: running or queued (`ActiveRender`), finished (`StoredRender`), or nothing (404).
    func lookup(_ id: String) async throws -> RenderLookup {
        guard let id = DataDirectory.validID(id, length: RenderIdentity.length) else { throw ServiceError.notFound("render \(id.prefix(40))") }
        if let stored = renders.get(id) { return .stored(stored) }
        if let active = await scheduler.find(id) { return .active(active) }
        throw ServiceError.notFound("render \(id)")
    }
}

enum RenderLookup {
    case active(ActiveRender)
    case stored(StoredRender)
}
