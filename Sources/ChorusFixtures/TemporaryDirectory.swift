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

    deinit { try? FileManager.default.removeItem(at: url) }

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
