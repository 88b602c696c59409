import ChorusSupport
import ChorusWire
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
final class AudioMemoryCache: Sendable {
    private struct State {
        var files: [String: (buffer: ByteBuffer, used: UInt64)] = [:]
        var bytes = 0
        var clock: UInt64 = 0
    }
    private let state = Locked(State())
    let capacityBytes: Int

    init(capacityBytes: Int = 256 * 1_048_576) { self.capacityBytes = capacityBytes }

    /// The bytes of the file at `path`.
    func buffer(_ path: String) throws -> ByteBuffer {
        let cached = state.withLock { state -> ByteBuffer? in
            state.clock += 1
            guard let entry = state.files[path] else { return nil }
            state.files[path] = (entry.buffer, state.clock)
            return entry.buffer
        }
        if let cached { return cached }
        let data = try Data(contentsOf: URL(fileURLWithPath: path), options: .mappedIfSafe)
        let buffer = data.withUnsafeBytes { ByteBuffer(bytes: $0) }
        state.withLock { state in
            if state.files[path] == nil {
                state.files[path] = (buffer, state.clock)
                state.bytes += buffer.readableBytes
            }
            while state.bytes > capacityBytes, state.files.count > 1,
                let oldest = state.files.min(by: { $0.value.used < $1.value.used })?.key
            {
                state.bytes -= state.files.removeValue(forKey: oldest)?.buffer.readableBytes ?? 0
            }
        }
        return buffer
    }

    /// Forgets every file under `folder` (a render being deleted).
    func forget(under folder: URL) {
        state.withLock { state in
            for key in state.files.keys where key.hasPrefix(folder.path + "/") {
                state.bytes -= state.files.removeValue(forKey: key)?.buffer.readableBytes ?? 0
            }
        }
    }
}
