import ChorusWire
import Foundation

/// Finished renders (done or failed), indexed in memory and kept on disk in each render's folder;
/// `render.json` is written last, so a render without it never finished. On start, such folders are
/// recorded as failed ("interrupted"), and expired renders are deleted. Locks rather than an actor: every
/// audio request reads it (some on an event loop), and a lookup should cost neither a task switch nor a wait for
/// disk: changes are serialized by one lock held while files are written, the index by another held only
/// to read or update it.
final class RenderStore: @unchecked Sendable {
    private let data: DataDirectory
    private let lock = NSRecursiveLock()
    private let indexLock = NSLock()
    private var records: [String: StoredRender] = [:]

    init(data: DataDirectory) { self.data = data }

    private func locked<T>(_ body: () throws -> T) rethrows -> T {
        lock.lock()
        defer { lock.unlock() }
        return try body()
    }

    private func index<T>(_ body: (inout [String: StoredRender]) throws -> T) rethrows -> T {
        indexLock.lock()
        defer { indexLock.unlock() }
        return try body(&records)
    }

    /// Reads every render folder; returns how many unfinished renders were marked failed.
    func load(now: Double = Date().timeIntervalSince1970, retention: Double, sharedJobs: Bool = false) -> Int {
        locked { loadLocked(now: now, retention: retention, sharedJobs: sharedJobs) }
    }

    private func loadLocked(now: Double, retention: Double, sharedJobs: Bool) -> Int {
        var interrupted = 0
        let names = (try? FileManager.default.contentsOfDirectory(atPath: data.renders.path)) ?? []
        for name in names {
            guard let id = DataDirectory.validID(name, length: RenderIdentity.length) else { continue }
            let folder = data.renderFolder(id)
            if let stored = try? JSONDecoder().decode(StoredRender.self, from: Data(contentsOf: folder.appendingPathComponent("render.json"))) {
                if stored.expiresAt <= now { try? FileManager.default.removeItem(at: folder) } else { index { $0[id] = stored } }
                continue
            }
            // Started but never finished: keep the fact, not the files.
            for file in (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? [] {
                try? FileManager.default.removeItem(at: folder.appendingPathComponent(file))
            }
            // With shared jobs (`--database`) the job is not lost: another instance (or this one) takes it over.
            guard !sharedJobs else { continue }
            try? save(StoredRender.failure(id: id, format: nil, createdAt: now, expiresAt: now + retention, error: StoredRender.interrupted))
            interrupted += 1
        }
        return interrupted
    }

    func get(_ id: String, now: Double = Date().timeIntervalSince1970) -> StoredRender? {
        index { records in
            guard let stored = records[id], stored.expiresAt > now else { return nil }
            return stored
        }
    }

    /// Records a finished render (writing `render.json` last).
    func save(_ stored: StoredRender) throws {
        let folder = data.renderFolder(stored.manifest.id)
        try locked {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            try DataDirectory.write(JSONEncoder().encode(stored), to: folder.appendingPathComponent("render.json"))
            index { $0[stored.manifest.id] = stored }
        }
    }

    /// Saves `stored` over the render's record only if the render still exists (checked and saved under the one
    /// lock, so a `DELETE` in between cannot be undone by a late update).
    func replace(_ stored: StoredRender) throws {
        try locked {
            guard index({ $0[stored.manifest.id] }) != nil else { return }
            try save(stored)
        }
    }

    /// Deletes a render and its files; returns whether it existed.
    @discardableResult
    func remove(_ id: String) -> Bool {
        locked {
            let existed = index { $0.removeValue(forKey: id) } != nil
            try? FileManager.default.removeItem(at: data.renderFolder(id))
            return existed
        }
    }

    /// Deletes expired renders; returns their ids.
    func sweep(now: Double = Date().timeIntervalSince1970) -> [String] {
        locked {
            let expired = index { $0.filter { $0.value.expiresAt <= now }.map(\.key) }
            expired.forEach { remove($0) }
            return expired
        }
    }

    var count: Int { index { $0.count } }
}
