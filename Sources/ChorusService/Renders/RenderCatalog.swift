import ChorusAudio
import Foundation
import Logging

/// Where a render is, wherever it is: running or queued here (`ActiveRender`), queued for or running on another
/// instance (a shared queue entry), finished (`StoredRender`: here, or adopted from the shared storage), or nowhere. It
/// also drops this instance's copies of renders deleted elsewhere, and finds a stored render's audio.
struct RenderCatalog: Sendable {
    let renders: RenderStore
    let scheduler: RenderScheduler
    let data: DataDirectory
    /// Blobs shared with other instances (`--storage`), if any.
    let shared: SharedStorage?
    /// The queue several instances share and what this instance hears of it (`--database`), if any.
    let queue: SharedQueue?
    let watcher: QueueWatcher?
    /// Stored audio held in memory (`FileResponder`): a deleted render's is forgotten.
    let memory: AudioMemoryCache
    let logger: Logger

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
        if let stored, queue == nil { return .stored(stored) }
        guard let queue else { return try await adopt(id).map { .stored($0) } }
        guard let job = try await queue.entry(id) else { return nil }
        switch job.status {
        case .queued, .running:
            return .remote(job)
        case .failed:
            return .stored(
                job.record
                    ?? StoredRender.failure(
                        id: id, format: job.format, createdAt: job.createdAt, expiresAt: job.expiresAt,
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
                    await signal.wait(timeout: 0.2)  // given up here, about to leave: another instance has it
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
            try await shared.fetchFiles(of: stored, into: data.render(id))
        }
        try await renders.save(stored)
        // Deleted meanwhile (its notification may have come before this copy was recorded): not kept here.
        if let queue, try await queue.entry(id) == nil {
            await evict(id, createdAt: stored.createdAt)
            return nil
        }
        return stored
    }

    /// Deletes render `id` (its files here and in the shared storage, its record, its row in the shared queue).
    /// - Throws: `ServiceError` 404 for no such render, 409 `not_ready` while it runs here or elsewhere, or once it is
    ///   queued again elsewhere since this instance's copy was made; `DatabaseError`, `StorageError`.
    func delete(_ id: String) async throws {
        switch try await lookup(id) {
        case .active, .remote: throw ServiceError(.conflict, .notReady, "the render is still running; delete it when it has finished")
        case .stored(let stored):
            // The row expires first, then the files go, then the row: a failure in between leaves an expired row
            // (not found, replaced by a new request, finished by the sweep), never files that no row names.
            if let queue, try await !queue.expire(stored.manifest.id) {
                // Queued again (or running) elsewhere since this instance's copy was made: not ours to delete now.
                throw ServiceError(.conflict, .notReady, "the render is being made again; delete it when it has finished")
            }
            try await shared?.remove(stored)
            _ = try await queue?.delete(stored.manifest.id)
            memory.forget(under: data.render(stored.manifest.id).url)
            try await renders.remove(stored.manifest.id)
        }
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
        let renders = self.renders
        let memory = self.memory
        let data = self.data
        let logger = self.logger
        return { [weak scheduler] id, createdAt in
            guard let scheduler else { return false }
            do {
                let removed = try await renders.remove(id, madeAt: createdAt) { await scheduler.find($0) != nil }
                if removed { memory.forget(under: data.render(id).url) }
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
        guard let queue else { return 0 }
        // A render's row exists from its enqueueing until it is deleted or swept, so a copy without one is of either.
        let copies = renders.recorded
        guard !copies.isEmpty else { return 0 }
        let existing = try await queue.existing(copies.map(\.id))
        var evicted = 0
        for copy in copies where !existing.contains(copy.id) {
            if await evict(copy.id, createdAt: copy.createdAt) { evicted += 1 }
        }
        return evicted
    }

    /// Where a done render's audio is (or would be) in this instance's data folder; `nil` for a render without audio.
    func audioPath(_ stored: StoredRender) -> String? {
        guard stored.isDone, let format = stored.format else { return nil }
        return data.render(stored.manifest.id).audioPath(format)
    }

    /// Whether this instance holds the render's audio itself (else it is in the shared storage).
    func hasLocalAudio(_ stored: StoredRender) -> Bool {
        shared == nil || audioPath(stored).map { FileManager.default.fileExists(atPath: $0) } == true
    }

    /// The local path of a stored render's audio, copied from the shared storage first if this instance does not
    /// have it (a render adopted from another instance), for work that needs the whole file.
    /// - Throws: `ServiceError` 404 for a render without audio, `StorageError`.
    func localAudio(_ stored: StoredRender) async throws -> URL {
        guard let path = audioPath(stored) else { throw ServiceError.notFound("the audio of render \(stored.manifest.id)") }
        let file = URL(fileURLWithPath: path)
        guard let shared, !hasLocalAudio(stored) else { return file }
        try await shared.fetchAudio(of: stored, into: data.render(stored.manifest.id))
        return file
    }
}
