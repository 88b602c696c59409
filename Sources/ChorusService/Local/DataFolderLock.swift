import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// One process per data folder: `<data>/chorus.lock`, write-locked (a POSIX record lock) for as long as the process
/// holds it. A second `chorus serve` on the same folder would resume the same accepted renders and remove the first
/// one's files in the making (start-up sweeps temporary files), so it stops at start, naming the folder and the
/// process that has it. The lock is the process's: openings within one process (tests) do not exclude each other, and
/// it goes with the process however it ends (`kill -9` included) — no stale lock to remove by hand.
/// Owns the descriptor; `deinit` closes it (and with it the lock).
final class DataFolderLock: @unchecked Sendable {
    static let fileName = "chorus.lock"
    private let descriptor: Int32
    /// Why the folder is not locked although nobody else holds it (a file system without locks, e.g. some NFS
    /// mounts): the service runs, and says so at start.
    let notLocked: String?

    /// Takes the lock of `folder` (created if missing).
    /// - Throws: `ConfigurationError` naming the folder: held by another process, or the file cannot be opened.
    ///   A file system that cannot lock is not an error (`notLocked` says why).
    init(folder: URL) throws {
        let path = folder.appendingPathComponent(Self.fileName).path
        do {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        } catch {
            throw ConfigurationError(setting: .dataDirectory, value: folder.path, reason: "cannot create the folder (\(error.localizedDescription))")
        }
        let descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else {
            throw ConfigurationError(
                setting: .dataDirectory, value: folder.path, reason: "cannot open \(Self.fileName) (\(String(cString: strerror(errno))))")
        }
        var lock = Self.wholeFile(F_WRLCK)
        if fcntl(descriptor, F_SETLK, &lock) == 0 {
            notLocked = nil
        } else {
            let reason = errno
            guard reason == EACCES || reason == EAGAIN else {
                notLocked = "\(Self.fileName) cannot be locked here (\(String(cString: strerror(reason))))"
                self.descriptor = descriptor
                return
            }
            var holder = Self.wholeFile(F_WRLCK)
            let pid = fcntl(descriptor, F_GETLK, &holder) == 0 && holder.l_type != Int16(F_UNLCK) ? " (pid \(holder.l_pid))" : ""
            close(descriptor)
            throw ConfigurationError(
                setting: .dataDirectory, value: folder.path,
                reason: "another chorus serve\(pid) is using this data folder; give each instance its own")
        }
        self.descriptor = descriptor
        // The holder's pid, for people looking (the lock, not the text, is what counts).
        let text = "\(getpid())\n"
        _ = ftruncate(descriptor, 0)
        _ = text.withCString { pwrite(descriptor, $0, strlen($0), 0) }
    }

    deinit { close(descriptor) }

    private static func wholeFile(_ type: Int32) -> flock {
        var lock = flock()
        lock.l_type = Int16(type)
        lock.l_whence = Int16(SEEK_SET)
        lock.l_start = 0
        lock.l_len = 0
        return lock
    }
}
