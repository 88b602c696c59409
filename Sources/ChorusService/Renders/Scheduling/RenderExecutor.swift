import ChorusAudio
import ChorusConversation
import ChorusOutbound
import ChorusSupport
import ChorusWire
import Crypto
import Foundation
import Hummingbird
import Logging

/// Runs one render into its folder: audio (streamed to listeners as it is encoded), timeline, captions and the
/// waveform base through the engine in one pass — the ETag from the audio as it is written (`AudioDigest`), the base
/// as the render's own peaks (its audio as a decoder reads it back, so every zoom equals `chorus waveform` on the
/// stored file) — and its record last, then answers everyone waiting. A failure leaves no audio and a failed record
/// saying why.
struct RenderExecutor: RenderRunner {
    /// Frames per point of the stored waveform base; zooms that are multiples of it are derived from it.
    static let waveformBase = 32

    let chorus: Chorus
    let data: DataDirectory
    let store: RenderStore
    let shared: SharedStorage?
    let metrics: ServiceMetrics
    let logger: Logger

    /// Runs `active` to its result and answers everyone waiting; returns the stored render when it is done.
    /// `record` runs with the result before anyone waiting for it hears it (shared jobs record it in the database).
    func execute(_ active: ActiveRender, record: @Sendable (Result<StoredRender, ServiceError>) async -> Void = { _ in }) async -> StoredRender? {
        active.markRunning()
        let started = Date()
        let result: Result<StoredRender, ServiceError>
        do {
            result = .success(try await render(active))
        } catch {
            if let error = error as? StorageError {
                logger.error("shared storage failed", metadata: ["render": .string(active.id), "error": .string(error.description)])
            }
            let failure = ServiceError(error, during: .render)
            await recordFailure(of: active, failure)
            result = .failure(failure)
        }
        metrics.rendered(outcome: (try? result.get()) == nil ? "failed" : "done", seconds: Date().timeIntervalSince(started))
        await record(result)
        if case .failure(let failure) = result { active.audio?.finish(throwing: failure) } else { active.audio?.finish() }
        active.finish(result)
        return try? result.get()
    }

    /// Records that `active` was accepted, before the client hears so: its folder, and (without shared jobs) the job
    /// with its `request` in the embedded database, so that a restart runs it again instead of losing it.
    /// - Throws: `ServiceError` 507/503/500 when it cannot be recorded (the render is then not accepted).
    func accept(_ active: ActiveRender, request: Data?) async throws {
        do {
            try FileManager.default.createDirectory(at: data.render(active.id).url, withIntermediateDirectories: true)
            if let request {
                try await store.accept(
                    id: active.id, caller: active.caller, request: request, createdAt: active.createdAt, expiresAt: active.expiresAt)
            }
        } catch {
            throw ServiceError(error, during: .render)
        }
    }

    func forgetAccepted(_ id: String) async throws { try await store.forgetAccepted(id) }

    func replaceEarlier(_ id: String, now: Double, createdAt: Double?) async throws {
        guard let earlier = store.get(id, now: 0) else { return }
        let other = createdAt.map { abs($0 - earlier.createdAt) >= 0.001 } ?? false
        if !earlier.isDone || earlier.expiresAt <= now || other { try await store.remove(id) }
    }

    func queued(depth: Int) { metrics.queue(depth: depth) }

    func claimed(waited: Double) { metrics.claimed(waited: waited) }

    /// Records `active` as failed with `failure` (its files removed, the record saying why) — unless it was stopped
    /// (shutdown, or taken over by another instance): that is not the render's failure, and it runs again.
    func recordFailure(of active: ActiveRender, _ failure: ServiceError) async {
        try? clearFiles(of: active.id)
        guard !active.isStopped else { return }
        do {
            try await store.save(
                StoredRender.failure(
                    id: active.id, format: active.resolved.format.rawValue, createdAt: active.createdAt,
                    expiresAt: active.expiresAt, error: failure.body.error))
        } catch {
            logger.error("failed render not recorded", metadata: ["render": .string(active.id), "error": .string("\(error)")])
        }
        logger.warning("render failed", metadata: ["render": .string(active.id), "error": .string(failure.description)])
    }

    private func render(_ active: ActiveRender) async throws -> StoredRender {
        let folder = data.render(active.id)  // made by `accept`
        let format = active.resolved.format
        let audioURL = folder.audioURL(format)
        var outputs = RenderOutputs(
            audio: audioURL, timeline: folder.url(.timeline), waveform: folder.url(.waveform), captions: folder.url(.captions))
        let stream = active.audio.map { _ in AudioChunkStream() }
        outputs.stream = stream
        let digest = AudioDigest()
        outputs.observer = digest
        var plan = active.resolved.plan
        plan.options.waveform = WaveformOptions(zoom: .samplesPerPixel(Self.waveformBase), bits: 16)
        let forwarding = Task {
            guard let stream, let tap = active.audio else { return }
            for try await chunk in stream { tap.send(chunk) }
        }
        defer { forwarding.cancel() }
        let result = try await chorus.render(plan, to: outputs).result { event in
            switch event {
            case .progress(let progress): active.update(synthesizedText: progress.synthesized, rendered: progress.rendered)
            case .segment(let segment): active.add(segment)
            case .warning, .finished: break
            }
        }
        _ = await forwarding.result
        let (etag, bytes) = (digest.etag, digest.length)
        let timeline = result.timeline
        var manifest = RenderManifest(
            id: active.id, status: .done, createdAt: Timestamp.iso(active.createdAt), expiresAt: Timestamp.iso(active.expiresAt))
        manifest.format = format.rawValue
        manifest.duration = timeline.duration
        manifest.samples = timeline.samples
        manifest.sampleRate = timeline.sampleRate
        manifest.channels = timeline.channels
        let stored = StoredRender(
            manifest: manifest, etag: etag, audioBytes: bytes, createdAt: active.createdAt, expiresAt: active.expiresAt,
            waveformBase: Self.waveformBase)
        // Published before it is recorded here: once a client hears the render is done, every instance finds it.
        try await shared?.publish(stored, from: folder)
        do {
            try await store.save(stored)
        } catch {
            try? await shared?.remove(stored)  // recorded failed here: not done anywhere
            throw error
        }
        return stored
    }

    private func clearFiles(of id: String) throws {
        let folder = data.render(id).url
        for name in try FileManager.default.contentsOfDirectory(atPath: folder.path) {
            try FileManager.default.removeItem(at: folder.appendingPathComponent(name))
        }
    }
}
