import ChorusAudio
import Foundation
import Logging
import ServiceLifecycle

/// On shutdown: stop taking renders, let accepted ones finish within the timeout, then cancel the
/// rest (not failed: they stay recorded as accepted, and the next start — or, with a shared queue, another
/// instance — runs them again). Runs before the HTTP server stops, so waiting requests get their answers.
struct RenderDrain: Service, CustomStringConvertible {
    let state: ServiceState
    var description: String { "RenderDrain" }

    func run() async throws {
        try? await gracefulShutdown()
        await state.drainRenders()
    }
}

extension ServiceState {
    /// Stops taking renders and lets the accepted ones finish within the shutdown timeout, then cancels the rest.
    func drainRenders() async {
        let depth = await scheduler.depth
        logger.info(
            "shutting down", metadata: ["renders_running": .stringConvertible(depth.running), "renders_waiting": .stringConvertible(depth.waiting)])
        // The timeout is the whole shutdown: renders get it less 2 s (at least half of it) for cancelling the rest,
        // answering their callers and closing connections (about 1 s measured), so the process exits within it.
        let timeout = configuration.shutdownTimeoutSeconds
        await scheduler.shutdown(timeout: max(timeout / 2, timeout - 2))
    }
}

/// Without `--database`: writes the request limits' buckets not yet full to the embedded database every 10 s (a bucket
/// refills within a minute, so a crash must not lose more than a few seconds of counting); the last write is
/// `ChorusServer.run`'s, when the service has stopped.
struct RateLimitKeeper: Service, CustomStringConvertible {
    let state: ServiceState
    var description: String { "RateLimitKeeper" }
    static let interval = 10.0

    func run() async throws {
        guard let keeper = state.deployment.localRateLimits, keeper.limiter.perMinute > 0 else {
            // Nothing to keep; a service that returns would stop the whole group, so it waits for the shutdown.
            try? await gracefulShutdown()
            return
        }
        await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                try? await Task.sleep(nanoseconds: UInt64(Self.interval * 1e9))
                guard !Task.isCancelled else { return }
                do {
                    try await keeper.save()
                } catch {
                    state.logger.warning("request limits not kept", metadata: ["error": .string("\(error)")])
                }
            }
        }
    }
}

/// Deletes expired renders and clips (and trims the synthesis cache) every few minutes.
struct RetentionSweeper: Service, CustomStringConvertible {
    let state: ServiceState
    var description: String { "RetentionSweeper" }

    var interval: Double { min(300, max(1, state.configuration.retentionSeconds / 10)) }

    func run() async throws {
        await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                await sweep()
                try? await Task.sleep(nanoseconds: UInt64(interval * 1e9))
            }
        }
    }

    func sweep() async {
        let expired: [String]
        do {
            let scheduler = state.scheduler
            expired = try await state.renders.sweep { await scheduler.find($0) != nil }
        } catch {
            expired = []
            state.logger.error("retention: renders not swept", metadata: ["error": .string("\(error)")])
        }
        for id in expired { state.files.memory.forget(under: state.data.render(id).url) }
        let renders = expired.count
        let clips: Int
        do {
            clips = try await state.clips.sweep()
        } catch {
            clips = 0
            state.logger.error("retention: clips not swept", metadata: ["error": .string("\(error)")])
        }
        state.chorus.cache.evict()
        if renders + clips > 0 {
            state.logger.info("retention", metadata: ["renders_deleted": .stringConvertible(renders), "clips_deleted": .stringConvertible(clips)])
        }
        if state.deployment.shared == nil {
            // Accepted renders whose resumption at start failed for the service's reasons: tried again.
            let scheduler = state.scheduler
            if let retry = try? await state.renders.unfinished(isActive: { await scheduler.find($0) != nil }), !retry.isEmpty {
                let resumed = await ChorusServer.resume(retry, state: state)
                state.logger.info("accepted renders run again", metadata: ["renders": .stringConvertible(resumed)])
            }
        }
        do {
            let evicted = try await state.catalog.evictDeleted()
            if evicted > 0 { state.logger.info("renders deleted elsewhere removed here", metadata: ["renders": .stringConvertible(evicted)]) }
        } catch {
            state.logger.warning("renders deleted elsewhere not checked", metadata: ["error": .string("\(error)")])
        }
        guard let shared = state.shared else { return }
        do {
            let removed: (renders: Int, clips: Int)
            if let queue = state.deployment.shared?.queue {
                // With a database: its rows say what expired, and one instance at a time sweeps.
                guard
                    let swept = try await queue.sweep(
                        removeFiles: { id, record, format in
                            try await shared.removeFiles(
                                of: id, format: (record?.manifest.format ?? format).flatMap(OutputFileFormat.init(rawValue:)))
                        },
                        alsoLocked: {
                            try? await state.deployment.shared?.rateLimits.sweep()
                            return try await shared.sweepClips()
                        })
                else { return }
                removed = (swept.renders, swept.other)
            } else {
                removed = try await shared.sweep()
            }
            if removed.renders + removed.clips > 0 {
                state.logger.info(
                    "retention of the shared storage",
                    metadata: [
                        "renders_deleted": .stringConvertible(removed.renders), "clips_deleted": .stringConvertible(removed.clips),
                    ])
            }
        } catch {
            state.logger.warning("retention of the shared storage failed", metadata: ["error": .string("\(error)")])
        }
    }
}

/// With shared jobs (`--database`): claims queued jobs (and jobs whose instance's lease ran out) whenever a worker is
/// free here — woken by the database's notifications and by renders finishing here, and looking every second anyway.
struct QueueClaimService: Service, CustomStringConvertible {
    let state: ServiceState
    var description: String { "JobClaimer" }

    func run() async throws {
        guard let watcher = state.deployment.shared?.watcher else { return }
        await cancelWhenGracefulShutdown {
            var failing = false
            while !Task.isCancelled {
                do {
                    while try await state.scheduler.claimNext() {}
                    if failing { state.logger.info("claiming renders from the database again") }
                    failing = false
                } catch {
                    if !failing {
                        state.logger.warning("cannot claim renders from the database", metadata: ["error": .string("\(error)")])
                    }
                    failing = true
                }
                await watcher.claims.wait(timeout: 1)
            }
        }
    }
}
