public import Foundation

/// A models folder of its own, for tests that add voices: set-up's Kokoro model linked with a copy of its voice files,
/// and links to the speaker model and Whisper tiny.en. Removed with it.
public final class PrivateModels: Sendable {
    public let root: URL
    public var kokoro: URL { root.appendingPathComponent("kokoro", isDirectory: true) }
    public var voices: URL { kokoro.appendingPathComponent("voices", isDirectory: true) }
    public var speaker: URL { root.appendingPathComponent("speaker-ge2e", isDirectory: true) }

    /// Links or copies from set-up's models folder (`$CHORUS_MODELS_DIR` or the default).
    public init() throws {
        let manager = FileManager.default
        let real: URL = {
            let environment = ProcessInfo.processInfo.environment
            if let folder = environment["CHORUS_MODELS_DIR"], !folder.isEmpty { return URL(fileURLWithPath: folder, isDirectory: true) }
            let data =
                environment["XDG_DATA_HOME"].flatMap { $0.isEmpty ? nil : URL(fileURLWithPath: $0, isDirectory: true) }
                ?? manager.homeDirectoryForCurrentUser.appendingPathComponent(".local/share", isDirectory: true)
            return data.appendingPathComponent("chorus/models", isDirectory: true)
        }()
        root = manager.temporaryDirectory.appendingPathComponent("chorus-models-\(UUID().uuidString)", isDirectory: true)
        try manager.createDirectory(at: kokoro, withIntermediateDirectories: true)
        let stock = real.appendingPathComponent("kokoro", isDirectory: true)
        try manager.createSymbolicLink(
            at: kokoro.appendingPathComponent("model.onnx"), withDestinationURL: stock.appendingPathComponent("model.onnx"))
        for name in ["model.json", "vocab.json"] {
            try manager.copyItem(at: stock.appendingPathComponent(name), to: kokoro.appendingPathComponent(name))
        }
        try manager.createDirectory(at: voices, withIntermediateDirectories: true)
        for name in try manager.contentsOfDirectory(atPath: stock.appendingPathComponent("voices").path)
        where !name.contains(".made.")
            && (name.hasSuffix(".npz") || name.hasSuffix(".bin"))
        {
            try manager.copyItem(at: stock.appendingPathComponent("voices/\(name)"), to: voices.appendingPathComponent(name))
        }
        for name in ["speaker-ge2e", "whisper-tiny.en"] {
            try manager.createSymbolicLink(at: root.appendingPathComponent(name), withDestinationURL: real.appendingPathComponent(name))
        }
    }

    deinit { try? FileManager.default.removeItem(at: root) }

    /// The voices folder's file names, sorted.
    public var voiceFiles: [String] { ((try? FileManager.default.contentsOfDirectory(atPath: voices.path)) ?? []).sorted() }
}
