import ChorusWire
import Foundation
public import Hummingbird
public import Logging
import NIOCore
import ServiceLifecycle

/// The Chorus HTTP service, built and ready to run (or to test in-process).
///
/// ```swift
/// let server = try await ChorusServer(configuration: ServiceConfiguration(environment: ProcessInfo.processInfo.environment))
/// try await server.run()   // until SIGTERM / SIGINT
/// ```
public struct ChorusServer: Sendable {
    let state: ServiceState
    let routes: RouteTable
    public let application: Application<RouterResponder<ChorusRequestContext>>

    /// Validates `configuration`, prepares the data folder and its embedded database (removing leftovers of a crash,
    /// queueing again the renders accepted and not finished) and builds the router.
    /// - Throws: `ConfigurationError` naming the setting (e.g. no API keys on a public host).
    public init(configuration: ServiceConfiguration, logger: Logger? = nil) async throws {
        try configuration.validate()
        let logger = logger ?? ChorusServer.logger(json: configuration.jsonLogs)
        state = try await ServiceState(configuration: configuration, logger: logger)
        if case .shared(let shared) = state.deployment, let url = configuration.database {
            try await PostgresDatabase.prepare(shared.database.location, url: url, logger: logger)
            let evict = state.catalog.evicting()
            shared.watcher.whenDeleted { id, createdAt in Task { _ = await evict(id, createdAt) } }
        }
        try await state.clips.load()
        try await state.deployment.localRateLimits?.load()
        let loaded = try await state.renders.load(retention: configuration.retentionSeconds, sharedQueue: state.deployment.shared != nil)
        let resumed = await Self.resume(loaded.pending, state: state)
        state.recognition.start()
        let (router, routes) = buildRouter(state: state)
        self.routes = routes
        // Hummingbird's idle timeout counts from the connection (or the last response) to the next complete
        // request part, and is suspended while a response is being produced: a slowloris head or an idle
        // keep-alive connection is closed, a long synchronous render is not.
        let idleTimeout = TimeAmount.nanoseconds(Int64(configuration.idleTimeoutSeconds * 1e9))
        let fastPath = AudioFastPath(state: state, authenticator: state.authenticator, limiter: state.limiter)
        application = Application(
            router: router, server: FastPathHTTP1Channel.server(fastPath: fastPath, idleTimeout: idleTimeout),
            configuration: ApplicationConfiguration(address: .hostname(configuration.host, port: configuration.port), serverName: "chorus"),
            services: Self.services(state), logger: logger)
        var metadata: Logger.Metadata = [
            "host": .string(configuration.host), "port": .stringConvertible(configuration.port),
            "data_dir": .string(configuration.dataDirectory.path), "workers": .stringConvertible(configuration.workers),
        ]
        if loaded.interrupted > 0 { metadata["renders_interrupted"] = .stringConvertible(loaded.interrupted) }
        if resumed > 0 { metadata["renders_resumed"] = .stringConvertible(resumed) }
        if configuration.apiKeys.isEmpty {
            logger.warning("no API keys configured: the service is open to anyone who can reach \(configuration.host) (loopback only)")
        }
        logger.info("chorus serve ready", metadata: metadata)
    }

    /// Queues again the renders accepted before the restart and not finished (oldest first); one whose request no
    /// longer resolves (a clip expired, a voice gone) is recorded failed, saying why. Returns how many were queued.
    static func resume(_ pending: [RenderStore.Pending], state: ServiceState) async -> Int {
        var resumed = 0
        for job in pending {
            do {
                var resolved = try await state.resolver.resolve(try JSONDecoder().decode(RenderRequest.self, from: job.request))
                resolved.id = job.id  // the id its client holds, even if the service's settings changed the content's
                try await state.scheduler.resume(resolved, caller: job.caller, createdAt: job.createdAt, expiresAt: job.expiresAt)
                resumed += 1
            } catch {
                let failure = ServiceError(error, during: .render)
                state.logger.warning("accepted render not run again", metadata: ["render": .string(job.id), "error": .string(failure.description)])
                // The request's own fault (4xx) is final; anything else (disk, database) leaves it for the next start.
                guard (400..<500).contains(Int(failure.status.code)) else { continue }
                try? await state.renders.save(
                    StoredRender.failure(
                        id: job.id, format: nil, createdAt: job.createdAt, expiresAt: job.expiresAt,
                        error: failure.body.error))
            }
        }
        return resumed
    }

    /// The background services: with a database, its pool first (stopped last), its listener and the claim loop.
    static func services(_ state: ServiceState) -> [any Service] {
        var services: [any Service] = []
        if case .shared(let shared) = state.deployment {
            services += [
                DatabaseService(database: shared.database),
                QueueListenService(database: shared.database, watcher: shared.watcher, logger: state.logger),
                QueueClaimService(state: state),
            ]
        }
        return services + [RetentionSweeper(state: state), RateLimitKeeper(state: state)]
    }

    /// Runs until SIGTERM or SIGINT, then drains renders (within the shutdown timeout) and stops.
    public func run() async throws {
        let group = ServiceGroup(
            configuration: .init(
                services: [application, RenderDrain(state: state)],
                gracefulShutdownSignals: [.sigterm, .sigint], logger: state.logger))
        do {
            try await group.run()
        } catch {
            await stopped()
            throw error
        }
        await stopped()
    }

    /// For a server whose application ran without `run` (in process, as HummingbirdTesting runs it), once it has
    /// stopped: what `run` does besides stopping the HTTP server — renders drained, then `stopped`.
    func stop() async {
        await state.drainRenders()
        await stopped()
    }

    /// Last, when the service has stopped: keeps the request limits' buckets and closes the embedded database.
    private func stopped() async {
        do {
            try await state.deployment.localRateLimits?.save()
        } catch {
            state.logger.warning("request limits not kept", metadata: ["error": .string("\(error)")])
        }
        await state.local.close()
    }

    /// swift-log to standard output: JSON lines, or swift-log's plain format on a terminal.
    public static func logger(json: Bool) -> Logger {
        var logger = Logger(label: "chorus") { label -> any LogHandler in
            json ? JSONLogHandler(label: label) : StreamLogHandler.standardOutput(label: label)
        }
        logger.logLevel = .info
        return logger
    }
}

/// Every route: open ones first, then `/v1` behind authentication and the per-key rate limit.
func buildRouter(state: ServiceState) -> (Router<ChorusRequestContext>, RouteTable) {
    let router = Router(context: ChorusRequestContext.self)
    let table = RouteTable()
    router.add(middleware: RequestLogMiddleware(logger: state.logger, metrics: state.metrics.requests, routes: table))
    SystemController(metrics: state.metrics, recognition: state.recognition, transcriptionRoutes: state.transcriptionRoutes).register(
        on: router, table: table)
    StudioController().register(on: router, table: table)
    let v1 = router.group()
        .add(middleware: state.authenticator)
        .add(middleware: RateLimitMiddleware(limiter: state.limiter, shared: state.deployment.shared?.rateLimits))
    let renders = RendersController(
        configuration: state.configuration, data: state.data, deployment: state.deployment, shared: state.shared, catalog: state.catalog,
        resolver: state.resolver, scheduler: state.scheduler, lexicons: state.lexicons, files: state.files, signer: state.signer,
        pool: state.chorus.workerPool)
    renders.register(on: v1, table: table)
    ClipsController(clips: state.clips, configuration: state.configuration).register(on: v1, table: table)
    VoicesController(chorus: state.chorus, clips: state.clips, workshop: state.workshop).register(on: v1, table: table)
    VoiceWorkshopRoutes(
        workshop: state.workshop, uploads: state.data.voiceUploads, maxBodyBytes: state.configuration.maxBodyBytes, pool: state.chorus.workerPool
    ).register(on: v1, table: table)
    LexiconsController(configuration: state.configuration, lexicons: state.lexicons).register(on: v1, table: table)
    SpeechController(
        configuration: state.configuration, lexicons: state.lexicons, resolver: state.resolver, catalog: state.catalog,
        registry: state.chorus.configuration.registry, renders: renders
    ).register(on: v1, table: table)
    TranscriptionController(
        chorus: state.chorus, clips: state.clips, configuration: state.configuration, recognition: state.recognition,
        transcriptionRoutes: state.transcriptionRoutes, transcripts: state.transcripts
    ).register(on: v1, table: table)
    return (router, table)
}
