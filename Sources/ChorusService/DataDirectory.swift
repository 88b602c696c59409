import ChorusAudio
import Foundation

/// The service's folder: `renders/<id>/` (audio, timeline, captions, waveform base, `render.json`),
/// `clips/<id>.audio` + `<id>.json`, and `cache/` for synthesized speech. Every file is written under a
/// temporary name and renamed into place; on start, temporary files left by a crash are removed.
struct DataDirectory: Sendable {
    let root: URL

    var renders: URL { root.appendingPathComponent("renders") }
    var clips: URL { root.appendingPathComponent("clips") }
    var cache: URL { root.appendingPathComponent("cache") }

    func renderFolder(_ id: String) -> URL { renders.appendingPathComponent(id) }

    /// Creates the folders and removes leftovers of interrupted writes.
    /// - Returns: how many temporary files were removed.
    @discardableResult
    func prepare() throws -> Int {
        for folder in [root, renders, clips, cache] {
            do {
                try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            } catch {
                throw ConfigurationError(setting: "--data-dir", value: root.path, reason: "cannot create \(folder.lastPathComponent)/ (\(error.localizedDescription))")
            }
        }
        var removed = 0
        let enumerator = FileManager.default.enumerator(at: root, includingPropertiesForKeys: nil, options: [])
        while let url = enumerator?.nextObject() as? URL {
            if url.lastPathComponent.hasPrefix(".") && url.lastPathComponent.hasSuffix(".partial") {
                try? FileManager.default.removeItem(at: url)
                removed += 1
            }
        }
        return removed
    }

    /// Writes `data` to `url` atomically.
    static func write(_ data: Data, to url: URL) throws {
        let output = try AtomicOutput(destination: url)
        defer { output.discard() }
        try output.write(data)
        try output.commit()
    }

    /// A hex id of exactly `length` characters, or `nil`: ids from clients are checked before any path is built.
    static func validID(_ text: String, length: Int) -> String? {
        text.count == length && text.allSatisfy({ $0.isHexDigit && !$0.isUppercase }) ? text : nil
    }
}
