import ChorusAudio
import ChorusOutbound
import ChorusSupport
import ChorusWire
import Foundation
import Hummingbird

/// `/v1/renders`: create (synchronous, `Prefer: respond-async`, or `?stream=true`), manifest, events,
/// audio, timeline, captions, waveform, delete.
struct RendersController: Sendable {
    let configuration: ServiceConfiguration
    let data: DataDirectory
    let deployment: Deployment
    let shared: SharedStorage?
    let catalog: RenderCatalog
    let resolver: RenderRequestResolver
    let scheduler: RenderScheduler
    let lexicons: LexiconStore
    let files: FileResponder
    let signer: URLSigner
    /// The service's audio threads (reading a finished render's bytes, pictures).
    let pool: WorkerPool

    func register(on router: some RouterMethods<ChorusRequestContext>, table: RouteTable) {
        table.add(.post, ServicePaths.renders, to: router) { request, context in
            try await start(try await renderRequest(request), mode: try RenderMode(request), context: context)
        }
        table.add(.post, ServicePaths.renderPlan, to: router) { request, context in
            let (_, resolved) = try await resolve(try await renderRequest(request), context: context)
            var rendered = false
            if case .stored(let stored)? = try await catalog.existing(resolved.id) { rendered = stored.isDone }
            return try HTTPSupport.json(RenderResponses.plan(resolved, rendered: rendered))
        }
        table.add(.get, ServicePaths.render("{id}"), to: router) { _, context in
            switch try await catalog.lookup(try id(context)) {
            case .active(let active): return try HTTPSupport.json(active.manifest())
            case .remote(let job): return try HTTPSupport.json(RenderResponses.manifest(job))
            case .stored(let stored): return try HTTPSupport.json(RenderResponses.manifest(stored, data: data))
            }
        }
        table.add(.get, ServicePaths.render("{id}", .events), to: router) { _, context in try await events(id: try id(context)) }
        for method in [HTTPRequest.Method.get, .head] {
            table.add(method, ServicePaths.render("{id}", .audio), to: router) { request, context in
                let stored = try await finished(try id(context))
                let contentType = stored.audioContentType
                let modified = Date(timeIntervalSince1970: stored.createdAt)
                if let shared = shared {
                    // A signed link's expiry also bounds the presigned URL it leads to.
                    let linkExpiry = request.uri.queryParameters["exp"].flatMap { Double(String($0)) }
                    if let url = shared.audioRedirect(of: stored, until: linkExpiry) {
                        return Response(status: .found, headers: [.location: url, .cacheControl: "private, no-store"])
                    }
                    if !catalog.hasLocalAudio(stored) {
                        // Made by another instance: ranges straight from the shared storage.
                        return try await files.respond(
                            to: request, size: stored.audioBytes, contentType: contentType, etag: stored.etag,
                            modified: modified
                        ) { range in try await shared.audio(of: stored, range: range) }
                    }
                }
                guard let path = catalog.audioPath(stored) else { throw ServiceError.notFound("the audio of render \(stored.manifest.id)") }
                return try await files.respond(
                    to: request, context: context, path: path, size: stored.audioBytes,
                    contentType: contentType, etag: stored.etag, modified: modified)
            }
        }
        table.add(.get, ServicePaths.render("{id}", .timeline), to: router) { _, context in
            let stored = try await finished(try id(context))
            return HTTPSupport.bytes(
                try Data(contentsOf: data.render(stored.manifest.id).url(.timeline)),
                contentType: RenderFolder.File.timeline.contentType)
        }
        table.add(.get, ServicePaths.render("{id}", .captions), to: router) { _, context in
            let stored = try await finished(try id(context))
            return HTTPSupport.bytes(
                try Data(contentsOf: data.render(stored.manifest.id).url(.captions)),
                contentType: RenderFolder.File.captions.contentType)
        }
        table.add(.get, ServicePaths.render("{id}", .waveform), to: router) { request, context in
            try await WaveformResponder(catalog: catalog, data: data, pool: pool).respond(to: request, stored: try await finished(try id(context)))
        }
        for (path, svg) in [(ServicePaths.render("{id}", .waveformPNG), false), (ServicePaths.render("{id}", .waveformSVG), true)] {
            table.add(.get, path, to: router) { request, context in
                try await PictureResponder(catalog: catalog, data: data, pool: pool, retentionSeconds: configuration.retentionSeconds).respond(
                    to: request, stored: try await finished(try id(context)), svg: svg)
            }
        }
        table.add(.get, ServicePaths.render("{id}", .player), to: router) { request, context in
            try PlayerResponder(signer: signer).respond(to: request, context: context, stored: try await finished(try id(context)))
        }
        table.add(.delete, ServicePaths.render("{id}"), to: router) { _, context in
            try await catalog.delete(try id(context))
            return Response(status: .noContent)
        }
    }

    private func id(_ context: ChorusRequestContext) throws -> String {
        guard let id = context.parameters.get("id") else { throw ServiceError.notFound("render") }
        return id
    }

    /// A render whose files exist (409 while it runs, 404 when unknown or failed-without-audio).
    private func finished(_ id: String) async throws -> StoredRender {
        switch try await catalog.lookup(id) {
        case .active, .remote: throw ServiceError(.conflict, .notReady, "the render is still running; follow GET /v1/renders/\(id)/events")
        case .stored(let stored):
            guard stored.isDone else { throw ServiceError(.notFound, .renderFailed, "render \(id) failed: \(stored.manifest.error?.message ?? "")") }
            return stored
        }
    }

    /// Starts (or finds) the render of `body` and answers as `mode` asks: synchronously with the
    /// manifest, at once with 202, or with the audio as it is encoded.
    /// A render request's body, within the body and message limits.
    private func renderRequest(_ request: Request) async throws -> RenderRequest {
        try HTTPSupport.decode(
            RenderRequest.self, from: try await HTTPSupport.body(of: request, limit: configuration.maxBodyBytes),
            budget: JSONBudget(arrayKey: "messages", maxArrayElements: configuration.maxMessages))
    }

    /// `request` as this caller may render it (their made voices only; a stored lexicon named is given as its entries,
    /// now: the id is computed from them and a queued render carries them), and the render it resolves to.
    private func resolve(_ request: RenderRequest, context: ChorusRequestContext) async throws -> (RenderRequest, ResolvedRender) {
        var body = request
        try VoiceWorkshopRoutes.checkOwnership(of: body, owner: VoiceWorkshopRoutes.owner(context))
        body.lexicon = try await lexicons.inlined(body.lexicon, caller: context.caller?.id ?? "anonymous")
        return (body, try await resolver.resolve(body))
    }

    func start(_ request: RenderRequest, mode: RenderMode, context: ChorusRequestContext, words: Bool = true) async throws -> Response {
        let (body, resolved) = try await resolve(request, context: context)
        let streaming = mode == .stream
        if streaming && !resolved.format.isStreamable {
            throw ServiceError.badRequest(
                "?stream=true needs mp3 or ogg output (\(resolved.format.rawValue) rewrites its header at the end)", field: "stream")
        }
        let locations: HTTPFields = [.init("X-Render-Id")!: resolved.id, .contentLocation: ServicePaths.render(resolved.id)]
        if case .stored(let stored)? = try await catalog.existing(resolved.id), stored.isDone {
            if streaming { return try await streamStored(stored, headers: locations, context: context) }
            return try HTTPSupport.json(RenderResponses.manifest(stored, data: data, words: words), headers: locations)
        }
        // Failed before: the scheduler replaces the failed record as it accepts the render again.
        let active: ActiveRender
        switch try await scheduler.submit(
            resolved, request: body.pinned(to: resolved.plan), caller: context.caller?.id ?? "anonymous",
            retention: configuration.retentionSeconds)
        {
        case .local(let render):
            active = render
        case .remote(let job):
            // Queued for or running on another instance (shared jobs): answered from the database and the shared storage.
            if mode == .async && (job.status == .queued || job.status == .running) {
                var headers = locations
                headers[.location] = ServicePaths.render(resolved.id)
                return try HTTPSupport.json(RenderResponses.manifest(job), status: .accepted, headers: headers)
            }
            let stored = try await catalog.finishedShared(job.id)
            if streaming { return try await streamStored(stored, headers: locations, context: context) }
            return try HTTPSupport.json(RenderResponses.manifest(stored, data: data, words: words), status: .created, headers: locations)
        }
        if streaming, let tap = active.audio {
            var headers = locations
            headers[.contentType] = resolved.format.mimeType
            // The status waits for the first audio bytes (they are what the client waits for anyway),
            // so a render that fails before any audio — an unknown voice, a provider down for the
            // first message — is a JSON error, not a 200 whose body breaks off.
            let chunks = StreamCursor(tap.listen())
            let first: Data?
            do {
                first = try await chunks.next()
            } catch {
                throw ServiceError(error, during: .render)
            }
            return Response(
                status: .ok, headers: headers,
                body: ResponseBody { writer in
                    if let first { try await writer.write(ByteBuffer(bytes: first)) }
                    while let chunk = try await chunks.next() { try await writer.write(ByteBuffer(bytes: chunk)) }
                    try await writer.finish(nil)
                })
        }
        if mode == .async {
            var headers = locations
            headers[.location] = ServicePaths.render(resolved.id)
            return try HTTPSupport.json(active.manifest(), status: .accepted, headers: headers)
        }
        switch await active.completion() {
        case .success(let stored):
            return try HTTPSupport.json(RenderResponses.manifest(stored, data: data, words: words), status: .created, headers: locations)
        case .failure(let error):
            // A shared job this instance gave up (another instance took it over): that instance's result.
            if deployment.shared != nil, active.isStopped {
                let stored = try await catalog.finishedShared(resolved.id)
                return try HTTPSupport.json(RenderResponses.manifest(stored, data: data, words: words), status: .created, headers: locations)
            }
            throw error
        }
    }

    private func streamStored(_ stored: StoredRender, headers: HTTPFields, context: ChorusRequestContext) async throws -> Response {
        var headers = headers
        headers[.contentType] = stored.audioContentType
        let file = try await catalog.localAudio(stored)
        // Read before the status is sent (off the event loop), so a render deleted meanwhile is a 404, not a cut-off 200.
        guard let audio = try? await pool.run({ try Data(contentsOf: file, options: .mappedIfSafe) }) else {
            throw ServiceError(.notFound, .notFound, "render \(stored.manifest.id) is gone")
        }
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(data: audio)))
    }

    private func events(id: String) async throws -> Response {
        let lookup = try await catalog.lookup(id)
        let data = data
        let headers: HTTPFields = [.contentType: "text/event-stream", .cacheControl: "no-cache"]
        switch lookup {
        case .active(let active):
            let feed = active.listen()
            return Response(
                status: .ok, headers: headers,
                body: ResponseBody { writer in
                    for try await event in feed { try await writer.write(RenderResponses.event(event, data: data)) }
                    try await writer.finish(nil)
                })
        case .remote(let job):
            return Response(
                status: .ok, headers: headers,
                body: ResponseBody { writer in
                    for await event in remoteEvents(of: job) { try await writer.write(RenderResponses.event(event, data: data)) }
                    try await writer.finish(nil)
                })
        case .stored(let stored):
            let events = RenderResponses.replay(stored, data: data).map { RenderResponses.event($0, data: data) }
            return Response(status: .ok, headers: headers, body: .init(contentsOf: events))
        }
    }

    /// Five attempts 2 s apart (or sooner, when the database announces a change).
    static let remoteRetry = RetryPolicy(maxAttempts: 5, initialDelay: 2, multiplier: 1, maxDelay: 2, jitter: 0, maxTotal: .infinity)

    /// The events of a shared job another instance runs: its progress as that instance records it (each change the
    /// database announces, or every 2 s), then, once it has finished, everything a finished render replays (or its
    /// failure). If this instance ends up running it, its live events. A database or storage that cannot be reached
    /// meanwhile is tried again for about 10 s (`remoteRetry`), then reported (`failed`, 503); a shutdown ends the
    /// stream too.
    func remoteEvents(of job: SharedQueue.Entry) -> AsyncStream<RenderFeedEvent> {
        AsyncStream { continuation in
            let task = Task {
                guard let watcher = deployment.shared?.watcher else { return continuation.finish() }
                await watcher.watching(job.id) { signal in
                    var progress: RenderProgressBody?
                    while !Task.isCancelled {
                        guard await scheduler.isAccepting else {
                            continuation.yield(.failed(ServiceError.shuttingDown))
                            return
                        }
                        let found: RenderLookup?
                        do {
                            // The database or storage could not be reached: tried again for about 10 s, then told.
                            found = try await Self.remoteRetry.run(
                                { _ in try await catalog.existing(job.id) }, classify: { _ in .retry(after: nil) },
                                wait: { await signal.wait(timeout: $0) })
                        } catch {
                            continuation.yield(.failed(ServiceError(error, during: .render)))
                            return
                        }
                        switch found {
                        case .remote(let current)?:
                            if let now = current.progress, now != progress {
                                progress = now
                                continuation.yield(.progress(now))
                            }
                            await signal.wait(timeout: 2)
                        case .active(let active)?:
                            do {
                                for try await event in active.listen() { continuation.yield(event) }
                            } catch {}  // a render's events end with `failed`, never by throwing
                            return
                        case .stored(let stored)?:
                            RenderResponses.replay(stored, data: data).forEach { continuation.yield($0) }
                            return
                        case nil:
                            continuation.yield(.failed(ServiceError.notFound("render \(job.id)")))
                            return
                        }
                    }
                }
                continuation.finish()
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }
}

/// How a client wants a render answered.
enum RenderMode: Equatable {
    /// Wait for it and return the manifest (201).
    case sync
    /// Return 202 at once (`Prefer: respond-async`).
    case async
    /// Send the audio as it is encoded (`?stream=true`).
    case stream

    init(_ request: Request) throws {
        if try HTTPSupport.flag(request, "stream") {
            self = .stream
        } else if request.headers[.init("Prefer")!]?.lowercased().contains("respond-async") == true {
            self = .async
        } else {
            self = .sync
        }
    }
}

/// One listener's position in a render's audio, handed from the request handler to the response
/// body (which resumes where the handler stopped). Used by one task at a time.
final class StreamCursor: @unchecked Sendable {
    private var iterator: AsyncThrowingStream<Data, any Error>.AsyncIterator

    init(_ stream: AsyncThrowingStream<Data, any Error>) { iterator = stream.makeAsyncIterator() }

    func next() async throws -> Data? { try await iterator.next() }
}
