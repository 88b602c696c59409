public import Foundation

/// Where Chorus's models are, and what a model's folder holds as it is now: the one rule every model, voice and
/// recognizer folder is found and watched by (set-up writes `whisper-tiny.en/`, `whisper-base/`, `piper/`, `kokoro/`
/// here).
///
/// ```swift
/// let kokoro = ModelFolder.root().appendingPathComponent("kokoro", isDirectory: true)
/// let loaded = ModelFolder.contents(of: kokoro)   // load again when this changes
/// ```
public enum ModelFolder {
    /// The folder models are found in: `$CHORUS_MODELS_DIR`, else `$XDG_DATA_HOME/chorus/models`, else
    /// `~/.local/share/chorus/models`.
    public static func root(environment: [String: String] = ProcessInfo.processInfo.environment) -> URL {
        if let folder = environment["CHORUS_MODELS_DIR"], !folder.isEmpty { return URL(fileURLWithPath: folder, isDirectory: true) }
        let data =
            environment["XDG_DATA_HOME"].flatMap { $0.isEmpty ? nil : URL(fileURLWithPath: $0, isDirectory: true) }
            ?? FileManager.default.homeDirectoryForCurrentUser.appendingPathComponent(".local/share", isDirectory: true)
        return data.appendingPathComponent("chorus/models", isDirectory: true)
    }

    /// What a folder holds: each file's `stamp` (empty when there is no folder). A load is remembered with it, so a
    /// model put in place, replaced or mended is loaded again and an unchanged one (or an unchanged broken one) is not.
    public static func contents(of folder: URL) -> [String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
        return names.sorted().map { stamp(of: folder.appendingPathComponent($0)) }
    }

    /// A file's name, size and modification time (`name size seconds.nanoseconds`, `name -1` when it is missing).
    public static func stamp(of url: URL) -> String {
        var info = stat()
        guard stat(url.path, &info) == 0 else { return "\(url.lastPathComponent) -1" }
        return "\(url.lastPathComponent) \(info.st_size) \(info.st_mtim.tv_sec).\(info.st_mtim.tv_nsec)"
    }
}
