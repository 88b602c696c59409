import ChorusAudio
import Foundation
import NIOCore

/// Blobs as files under a folder: written under a temporary name and renamed into place (`AtomicOutput`).
struct FolderBlobStore: BlobStore {
    let root: URL

    var description: String { "folder \(root.path)" }

    /// The file of a blob name, which must be relative with no empty, `.` or `..` segment (names can come from
    /// stored records): reads of any other name find nothing, writes and deletes are refused.
    private func url(_ name: String) -> URL? { Self.isSafe(name) ? root.appendingPathComponent(name) : nil }

    private func writable(_ name: String, _ operation: String) throws -> URL {
        guard let url = url(name) else { throw StorageError(kind: .invalid, operation: operation, key: name, reason: "not a blob name") }
        return url
    }

    static func isSafe(_ name: String) -> Bool {
        !name.isEmpty && !name.hasPrefix("/")
            && !name.split(separator: "/", omittingEmptySubsequences: false).contains { $0.isEmpty || $0 == "." || $0 == ".." }
    }

    func put(_ data: Data, name: String, contentType: String) async throws {
        let destination = try writable(name, "put")
        do { try put(data, to: destination) } catch {
            throw StorageError(kind: .unavailable, operation: "put", key: name, reason: error.localizedDescription)
        }
    }

    func upload(file: URL, name: String, contentType: String) async throws {
        let destination = try writable(name, "upload")
        do {
            try FileManager.default.createDirectory(at: destination.deletingLastPathComponent(), withIntermediateDirectories: true)
            let output = try AtomicOutput(destination: destination)
            defer { output.discard() }
            try FileManager.default.copyItem(at: file, to: output.temporaryURL)
            try output.commit()
        } catch {
            throw StorageError(kind: .unavailable, operation: "upload", key: name, reason: error.localizedDescription)
        }
    }

    private func put(_ data: Data, to destination: URL) throws {
        try FileManager.default.createDirectory(at: destination.deletingLastPathComponent(), withIntermediateDirectories: true)
        let output = try AtomicOutput(destination: destination)
        defer { output.discard() }
        try output.write(data)
        try output.commit()
    }

    func read(_ name: String, range: ClosedRange<Int>?) async throws -> (size: Int, bytes: ByteBuffer)? {
        guard let path = url(name)?.path, let handle = FileHandle(forReadingAtPath: path) else { return nil }
        defer { try? handle.close() }
        do {
            let size = Int(try handle.seekToEnd())
            let wanted = range.map { $0.clamped(to: 0...max(0, size - 1)) } ?? (0...max(0, size - 1))
            guard size > 0 else { return (0, ByteBuffer()) }
            try handle.seek(toOffset: UInt64(wanted.lowerBound))
            let data = try handle.read(upToCount: wanted.count) ?? Data()
            return (size, ByteBuffer(data: data))
        } catch {
            throw StorageError(kind: .unavailable, operation: "read", key: name, reason: error.localizedDescription)
        }
    }

    func size(_ name: String) async throws -> Int? {
        var info = stat()
        guard let path = url(name)?.path, stat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { return nil }
        return Int(info.st_size)
    }

    func delete(_ name: String) async throws {
        let file = try writable(name, "delete")
        guard FileManager.default.fileExists(atPath: file.path) else { return }
        do { try FileManager.default.removeItem(at: file) } catch {
            throw StorageError(kind: .unavailable, operation: "delete", key: name, reason: error.localizedDescription)
        }
    }

    func list(prefix: String) async throws -> [String] {
        var names: [String] = []
        let base = root.standardizedFileURL.path
        let enumerator = FileManager.default.enumerator(at: root, includingPropertiesForKeys: [.isRegularFileKey])
        while let item = enumerator?.nextObject() as? URL {
            guard (try? item.resourceValues(forKeys: [.isRegularFileKey]))?.isRegularFile == true else { continue }
            let name = String(item.standardizedFileURL.path.dropFirst(base.count + 1))
            // Temporary files of writes in progress are not blobs.
            if name.hasPrefix(prefix) && !item.lastPathComponent.hasPrefix(".") { names.append(name) }
        }
        return names.sorted()
    }

    func presignedURL(_ name: String, expires: Int) -> String? { nil }
}
