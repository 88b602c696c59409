import ChorusAudio
import ChorusOutbound
import ChorusSupport
import Foundation

/// The service's folder: `chorus.sqlite` (the state: `LocalDatabase`), `renders/<id>/` (`RenderFolder`),
/// `clips/<id>.audio`, and `cache/` for synthesized speech. Every file is written under a
/// temporary name and renamed into place; on start, temporary files left by a crash are removed.
struct DataDirectory: Sendable {
    let root: URL
    let renders: URL
    let clips: URL
    let cache: URL
    /// Recordings a voice is being made from (`VoiceWorkshopRoutes`), each upload a folder removed when its voice is
    /// made or not; emptied on start.
    let voiceUploads: URL
    /// `renders.path`, kept: routes build file paths on every request.
    let rendersPath: String

    init(root: URL) {
        self.root = root
        renders = root.appendingPathComponent("renders")
        clips = root.appendingPathComponent("clips")
        cache = root.appendingPathComponent("cache")
        voiceUploads = root.appendingPathComponent("voice-uploads")
        rendersPath = renders.path
    }

    /// Render `id`'s folder (`renders/<id>/`) and its files.
    func render(_ id: String) -> RenderFolder { RenderFolder(id: id, renders: renders, rendersPath: rendersPath) }

    /// Creates the folders and removes leftovers of interrupted writes.
    /// - Returns: how many temporary files were removed.
    @discardableResult
    func prepare() throws -> Int {
        try? FileManager.default.removeItem(at: voiceUploads)
        for folder in [root, renders, clips, cache, voiceUploads] {
            do {
                try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            } catch {
                throw ConfigurationError(
                    setting: .dataDirectory, value: root.path, reason: "cannot create \(folder.lastPathComponent)/ (\(error.localizedDescription))")
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
    static func validID(_ text: String, length: Int) -> String? { Hex.isLowercase(text, length: length) ? text : nil }
}
