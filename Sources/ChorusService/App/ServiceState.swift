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
    /// This process's hold on the data folder (held as long as the state).
    let folderLock: DataFolderLock
    let clips: ClipStore
    let renders: RenderStore
    /// The embedded database behind `renders` and `clips`.
    let local: LocalDatabase
    /// Blobs shared with other instances (`--storage`), if any.
    let shared: SharedStorage?
    /// The database several instances share (`--database`), if any: its pool, the render index and job queue, and
    /// what this instance hears of it.
    let database: Database?
    let jobs: RenderJobs?
    let watcher: JobWatcher?
    /// The per-key request limit counted in the database (`--database`), else `limiter` counts per instance and
    /// `localRateLimits` keeps its buckets in the embedded database across restarts.
    let rateLimits: SharedRateLimits?
    let localRateLimits: LocalRateLimits?
    let scheduler: RenderScheduler
    let resolver: RenderRequestResolver
    let files: FileResponder
    let metrics: ServiceMetrics
    /// Signs the links a player page uses (secret in `<data>/signing.key`).
    let signer: URLSigner
    /// Who may call `/v1` (keys, signed links), and how often (per key).
    let authenticator: AuthenticationMiddleware
    let limiter: RateLimiter
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
        var engine = Chorus.Configuration(registry: configuration.registry ?? .standard(environment: configuration.environment),
                                          cacheDirectory: data.cache, providerConcurrency: configuration.providerConcurrency)
        engine.workerThreads = configuration.workers
        engine.voiceEngine = configuration.voiceEngine
        shared = try configuration.storage.map {
            try SharedStorage.make($0, redirectAudio: configuration.redirectAudio, environment: configuration.environment)
        }
        engine.sharedCache = shared?.cacheTier
        chorus = try Chorus(configuration: engine)
        let local = try await LocalDatabase.open(in: data.root, logger: logger)
        clips = ClipStore(folder: data.clips, retention: configuration.retentionSeconds, maxSeconds: configuration.maxClipSeconds,
                          pool: chorus.workerPool, database: local, shared: shared)
        self.local = local
        renders = RenderStore(data: data, database: local)
        metrics = ServiceMetrics()
        let resolver = RenderRequestResolver(configuration: configuration, clips: clips, chorus: chorus)
        self.resolver = resolver
        var sharedJobs: RenderScheduler.SharedJobs?
        if let url = configuration.database {
            let database = try Database(location: try DatabaseLocation(url: url), logger: logger)
            let jobs = RenderJobs(database: database, instance: UUID().uuidString.lowercased(), lease: configuration.leaseSeconds)
            let watcher = JobWatcher()
            self.database = database
            self.jobs = jobs
            self.watcher = watcher
            rateLimits = SharedRateLimits(database: database, perMinute: configuration.rateLimitPerMinute)
            localRateLimits = nil
            sharedJobs = RenderScheduler.SharedJobs(jobs: jobs, watcher: watcher, resolve: { try await resolver.resolve($0) }, logger: logger)
        } else {
            database = nil
            jobs = nil
            watcher = nil
            rateLimits = nil
            localRateLimits = LocalRateLimits(database: local, limiter: limiter)
        }
        let executor = RenderExecutor(chorus: chorus, data: data, store: renders, shared: shared, metrics: metrics, logger: logger)
        scheduler = RenderScheduler(workers: configuration.workers, queueLimit: configuration.queueLimit,
                                    perCaller: configuration.rendersPerKey, executor: executor, shared: sharedJobs)
        files = FileResponder(fileIO: FileIO(), maxAge: Int(configuration.retentionSeconds))
    }

    /// A render by id: running or queued (`ActiveRender`, or a shared job another instance runs), finished
    /// (`StoredRender`), or nothing (404).
    func lookup(_ id: String) async throws -> RenderLookup {
        guard let id = DataDirectory.validID(id, length: RenderIdentity.length), let found = try await existing(id) else {
            throw ServiceError.notFound("render \(id.prefix(40))")
        }
        return found
    }

    /// Render `id` (a valid id) wherever it is, or `nil`. With shared jobs the database decides what exists: a render
    /// done here stays valid (renders are immutable), anything else is read from the database.
    /// - Throws: `DatabaseError`, `StorageError` (503 when they cannot be reached).
    func existing(_ id: String) async throws -> RenderLookup? {
        let stored = renders.get(id)
        if let stored, stored.isDone { return .stored(stored) }
        // Being made again comes before an earlier failure (a DELETE must not take the new attempt's files).
        if let active = await scheduler.find(id) { return .active(active) }
        if let stored, jobs == nil { return .stored(stored) }
        guard let jobs else { return try await adopt(id).map { .stored($0) } }
        guard let job = try await jobs.job(id) else { return nil }
        switch job.status {
        case .queued, .running:
            return .remote(job)
        case .failed:
            return .stored(job.record ?? StoredRender.failure(id: id, format: job.format, createdAt: job.createdAt, expiresAt: job.expiresAt,
                                                              error: StoredRender.interrupted))
        case .done:
            // Recorded done but not (or no longer) in the shared storage: being deleted.
            return try await adopt(id).map { .stored($0) }
        }
    }

    /// Waits until shared job `id` has finished, on whichever instance; returns it done.
    /// - Throws: the render's failure as a `ServiceError`, 404 when it is gone, `DatabaseError`/`StorageError`.
    func finishedShared(_ id: String) async throws -> StoredRender {
        guard let watcher else { throw ServiceError.notFound("render \(id)") }
        return try await watcher.watching(id) { signal in
            while true {
                try Task.checkCancellation()
                guard await scheduler.isAccepting else { throw ServiceError.shuttingDown }
                switch try await existing(id) {
                case .stored(let stored):
                    guard stored.isDone else { throw RenderResponses.failure(of: stored) }
                    return stored
                case .active(let active) where active.isStopped:
                    await signal.wait(timeout: 0.2)   // given up here, about to leave: another instance has it
                case .active(let active):
                    return try await active.completion().get()
                case .remote:
                    await signal.wait(timeout: 2)
                case nil:
                    throw ServiceError.notFound("render \(id)")
                }
            }
        }
    }

    /// A render another instance finished and published to the shared storage, recorded here (with its small
    /// files; the audio is read from the shared storage until something needs it whole). `nil` without shared
    /// storage or when no instance has it.
    /// - Throws: `StorageError` (503 when the shared storage cannot be reached).
    func adopt(_ id: String) async throws -> StoredRender? {
        guard let shared, let stored = try await shared.record(id), stored.expiresAt > Date().timeIntervalSince1970 else { return nil }
        if stored.isDone {
            // A record whose audio is not (or no longer) all there is not a render: a publish cut short, a delete half done.
            guard try await shared.hasAudio(of: stored) else { return nil }
            try await shared.fetchFiles(of: stored, into: data.renderFolder(id))
        }
        try await renders.save(stored)
        // Deleted meanwhile (its notification may have come before this copy was recorded): not kept here.
        if let jobs, try await jobs.job(id) == nil {
            await evict(id, createdAt: stored.createdAt)
            return nil
        }
        return stored
    }

    /// Drops this instance's copy of render `id`, deleted on another instance (shared jobs): its record and files here,
    /// unless it is being made here again, or the copy is of a later render under the same id (`createdAt` differs).
    /// Returns whether it dropped it.
    @discardableResult
    func evict(_ id: String, createdAt: Double?) async -> Bool {
        await evicting()(id, createdAt)
    }

    /// `evict` without the state: what the job watcher calls on a notification. It holds the scheduler weakly (the
    /// scheduler holds the watcher: a strong reference would keep the whole service alive).
    func evicting() -> @Sendable (String, Double?) async -> Bool {
        let renders = self.renders, mapped = files.mapped, data = self.data, logger = self.logger
        return { [weak scheduler] id, createdAt in
            guard let scheduler else { return false }
            do {
                let removed = try await renders.remove(id, madeAt: createdAt) { await scheduler.find($0) != nil }
                if removed { mapped.forget(under: data.renderFolder(id)) }
                return removed
            } catch {
                logger.warning("deleted render not removed here", metadata: ["render": .string(id), "error": .string("\(error)")])
                return false
            }
        }
    }

    /// With shared jobs: drops the copies here of renders the database no longer has (deleted while this instance did
    /// not hear of it, or recorded here before the data folder was used with `--database`: the database decides what
    /// exists). Returns how many.
    func evictDeleted() async throws -> Int {
        guard let jobs else { return 0 }
        // A render's row exists from its enqueueing until it is deleted or swept, so a copy without one is of either.
        let copies = renders.recorded
        guard !copies.isEmpty else { return 0 }
        let existing = try await jobs.existing(copies.map(\.id))
        var evicted = 0
        for copy in copies where !existing.contains(copy.id) {
            if await evict(copy.id, createdAt: copy.createdAt) { evicted += 1 }
        }
        return evicted
    }

    /// Where a stored render's audio is (or would be) in this instance's data folder.
    func audioPath(_ stored: StoredRender) -> String { data.rendersPath + "/" + stored.manifest.id + "/" + stored.audioFile }

    /// Whether this instance holds the render's audio itself (else it is in the shared storage).
    func hasLocalAudio(_ stored: StoredRender) -> Bool { shared == nil || FileManager.default.fileExists(atPath: audioPath(stored)) }

    /// The local path of a stored render's audio, copied from the shared storage first if this instance does not
    /// have it (a render adopted from another instance), for work that needs the whole file.
    func localAudio(_ stored: StoredRender) async throws -> URL {
        let file = URL(fileURLWithPath: audioPath(stored))
        guard let shared, !hasLocalAudio(stored) else { return file }
        try await shared.fetchAudio(of: stored, into: data.renderFolder(stored.manifest.id))
        return file
    }
}

enum RenderLookup {
    case active(ActiveRender)
    case stored(StoredRender)
    /// A shared job queued for, or running on, another instance.
    case remote(RenderJobs.Job)
}
