import ChorusSupport
import ChorusWire
public import Foundation

/// A file written under a temporary name beside its destination and renamed into place only on
/// success, so a failed run never leaves a partial file and never clobbers an existing one. A destination that is not a
/// file — a device, a pipe or a socket (`-o /dev/null`, `/dev/stdout`, a named pipe), through a symbolic link or not —
/// is written in place: there is no file to keep whole, and a rename onto it would replace the device itself (as root,
/// `/dev/null` became an ordinary file).
///
/// ```swift
/// let output = try AtomicOutput(destination: url)
/// defer { output.discard() }          // removes the temporary file unless committed
/// try data.write(to: output.temporaryURL)
/// try output.commit()
/// ```
public final class AtomicOutput: @unchecked Sendable {
    public let destination: URL
    public let temporaryURL: URL
    private var committed = false
    /// The destination is a device, a pipe or a socket: `temporaryURL` is the destination itself.
    private let inPlace: Bool

    /// Checks that the destination's folder exists and is writable, and picks a temporary name in it (or, for a
    /// device, a pipe or a socket, writes in place).
    /// - Throws: `AudioError.writeFailed` naming the destination.
    public init(destination: URL) throws {
        self.destination = destination.standardizedFileURL
        var info = stat()
        let kind = stat(self.destination.path, &info) == 0 ? info.st_mode & S_IFMT : 0
        inPlace = kind != 0 && kind != S_IFREG && kind != S_IFDIR
        if inPlace {
            temporaryURL = self.destination
            return
        }
        let directory = self.destination.deletingLastPathComponent()
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: directory.path, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw AudioError(.writeFailed, subject: destination.path, reason: "the folder \(directory.path) does not exist")
        }
        guard access(directory.path, W_OK) == 0 else {
            throw AudioError(.writeFailed, subject: destination.path, reason: "the folder \(directory.path) is not writable")
        }
        var isDir: ObjCBool = false
        if FileManager.default.fileExists(atPath: self.destination.path, isDirectory: &isDir), isDir.boolValue {
            throw AudioError(.writeFailed, subject: destination.path, reason: "is a folder, not a file")
        }
        let name = ".\(self.destination.lastPathComponent).\(UUID().uuidString.prefix(8)).partial"
        temporaryURL = directory.appendingPathComponent(name)
        Self.pending.withLock { _ = $0.insert(temporaryURL.path) }
    }

    /// Temporary files not yet committed or discarded, so an interrupted process can remove them.
    private static let pending = Locked<Set<String>>([])

    /// Removes every temporary file still pending; for signal handlers (`SIGINT`, `SIGTERM`) before exiting.
    public static func discardAllPending() {
        for path in pending.value { unlink(path) }
    }

    /// Writes `data` to the temporary file.
    public func write(_ data: Data) throws {
        do {
            try data.write(to: temporaryURL)
        } catch {
            throw AudioError(.writeFailed, subject: destination.path, reason: "cannot write", underlying: error.localizedDescription)
        }
    }

    /// Renames the temporary file onto the destination.
    public func commit() throws {
        if inPlace {
            committed = true
            return
        }
        guard rename(temporaryURL.path, destination.path) == 0 else {
            throw AudioError(
                .writeFailed, subject: destination.path, reason: "cannot move the finished file into place",
                underlying: String(cString: strerror(errno)))
        }
        committed = true
        Self.pending.withLock { _ = $0.remove(temporaryURL.path) }
    }

    /// Removes the temporary file if it was not committed. Safe to call more than once.
    public func discard() {
        if !committed && !inPlace { unlink(temporaryURL.path) }
        Self.pending.withLock { _ = $0.remove(temporaryURL.path) }
    }

    deinit { discard() }
}
