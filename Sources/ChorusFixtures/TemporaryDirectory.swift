public import Foundation

/// A fresh temporary folder, removed with everything in it when the value is released.
///
/// ```swift
/// let directory = try TemporaryDirectory()
/// let url = directory.file("out.mp3")
/// ```
public final class TemporaryDirectory: @unchecked Sendable {
    public let url: URL

    public init(prefix: String = "chorus") throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("\(prefix)-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    /// Removes the folder. Something released with it may still be changing it (a service's database closing in the
    /// background deletes its log file), and a removal that meets a file appearing or vanishing gives up part-way: it is
    /// tried again, for up to a second.
    deinit {
        for _ in 0..<50 {
            do {
                try FileManager.default.removeItem(at: url)
                return
            } catch {
                guard FileManager.default.fileExists(atPath: url.path) else { return }
                usleep(20_000)
            }
        }
    }

    /// A path inside the folder.
    public func file(_ name: String) -> URL { url.appendingPathComponent(name) }

    /// Writes `text` to `name` and returns its URL.
    @discardableResult
    public func write(_ text: String, to name: String) throws -> URL {
        let url = file(name)
        try Data(text.utf8).write(to: url)
        return url
    }
}
