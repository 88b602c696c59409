public import Foundation

/// A file written under a temporary name beside its destination and renamed into place only on
/// success, so a failed run never leaves a partial file and never clobbers an existing one.
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

    /// Checks that the destination's folder exists and is writable, and picks a temporary name in it.
    /// - Throws: `AudioError.writeFailed` naming the destination.
    public init(destination: URL) throws {
        self.destination = destination.standardizedFileURL
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
        guard rename(temporaryURL.path, destination.path) == 0 else {
            throw AudioError(.writeFailed, subject: destination.path, reason: "cannot move the finished file into place",
                             underlying: String(cString: strerror(errno)))
        }
        committed = true
    }

    /// Removes the temporary file if it was not committed. Safe to call more than once.
    public func discard() {
        if !committed { unlink(temporaryURL.path) }
    }

    deinit { discard() }
}
