public import ChorusAudio
import Crypto
public import Foundation

/// Synthesized clips stored by content: the file name is the SHA-256 of a canonical description
/// of everything that shapes the audio (provider, model, voice, settings, output format, text,
/// neighbouring text, cache format version). API keys are never part of it.
///
/// Entries are written atomically (temporary name, then rename; the metadata file last), checked by
/// decoding before they are served (a broken entry is deleted and reported as a miss), and evicted
/// least-recently-used beyond `maxBytes`.
///
/// ```swift
/// let cache = try SynthesisCache(directory: SynthesisCache.defaultDirectory(), maxBytes: 1 << 30)
/// ```
public final class SynthesisCache: Sendable {
    /// A stored clip.
    public struct Entry: Sendable {
        public var audio: URL
        public var words: [WordTiming]?
        public var frames: Int
        public var sampleRate: Int
        public var duration: Double { Double(frames) / Double(sampleRate) }
    }

    static let formatVersion = 1
    public let directory: URL
    public let maxBytes: Int

    /// `CHORUS_CACHE_DIR`, else `$XDG_CACHE_HOME/chorus`, else `~/.cache/chorus`.
    public static func defaultDirectory(environment: [String: String] = ProcessInfo.processInfo.environment) -> URL {
        if let explicit = environment["CHORUS_CACHE_DIR"], !explicit.isEmpty { return URL(fileURLWithPath: explicit) }
        if let xdg = environment["XDG_CACHE_HOME"], xdg.hasPrefix("/") { return URL(fileURLWithPath: xdg).appendingPathComponent("chorus") }
        let home = environment["HOME"] ?? NSHomeDirectory()
        return URL(fileURLWithPath: home).appendingPathComponent(".cache/chorus")
    }

    /// Opens (creating if needed) a cache folder.
    /// - Throws: `AudioError.writeFailed` when the folder cannot be created.
    public init(directory: URL, maxBytes: Int = 1024 * 1_048_576) throws {
        self.directory = directory.appendingPathComponent("v\(Self.formatVersion)")
        self.maxBytes = maxBytes
        do {
            try FileManager.default.createDirectory(at: self.directory, withIntermediateDirectories: true)
        } catch {
            throw AudioError(.writeFailed, subject: directory.path, reason: "cannot create the voice cache folder",
                             underlying: error.localizedDescription)
        }
    }

    /// The cache key for one synthesis request.
    public static func key(provider: String, voice: String, format: String, settings: [String: JSONValue], text: String,
                           previousText: String? = nil, nextText: String? = nil) -> String {
        var description: [String: JSONValue] = [
            "cache_version": .number(Double(formatVersion)), "provider": .string(provider), "voice": .string(voice),
            "format": .string(format), "settings": .object(settings), "text": .string(text),
        ]
        if let previousText { description["previous_text"] = .string(previousText) }
        if let nextText { description["next_text"] = .string(nextText) }
        let digest = SHA256.hash(data: Data(JSONValue.object(description).canonicalText.utf8))
        return digest.map { String(format: "%02x", $0) }.joined()
    }

    private func folder(for key: String) -> URL { directory.appendingPathComponent(String(key.prefix(2))) }
    private func metadataURL(for key: String) -> URL { folder(for: key).appendingPathComponent(key + ".json") }

    /// The entry for `key` if it exists and decodes; a broken entry is deleted and `nil` returned.
    public func lookup(_ key: String) -> Entry? {
        let metadataURL = metadataURL(for: key)
        guard let data = try? Data(contentsOf: metadataURL),
              let metadata = try? JSONDecoder().decode(Metadata.self, from: data) else { return nil }
        let audio = folder(for: key).appendingPathComponent(metadata.audio)
        guard let decoded = try? AudioFileReader(url: audio).readAll(), decoded.frameCount > 0 else {
            try? FileManager.default.removeItem(at: metadataURL)
            try? FileManager.default.removeItem(at: audio)
            return nil
        }
        // Mark as recently used for eviction.
        utimes(metadataURL.path, nil)
        return Entry(audio: audio, words: metadata.words, frames: decoded.frameCount, sampleRate: decoded.format.sampleRate)
    }

    /// Stores a synthesized clip under `key` and returns it as an entry.
    public func store(_ key: String, speech: SynthesizedSpeech, voice: String) throws -> Entry {
        let folder = folder(for: key)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let name: String
        var known: Entry?
        switch speech.audio {
        case .pcm(let buffer):
            guard buffer.frameCount > 0 else {
                throw AudioError(.emptyAudio, subject: "\(voice)", reason: "the provider returned no audio samples")
            }
            name = key + ".flac"
            try AudioFileWriter.write(buffer, to: folder.appendingPathComponent(name))  // atomic itself
            known = Entry(audio: folder.appendingPathComponent(name), words: speech.words,
                          frames: buffer.frameCount, sampleRate: buffer.format.sampleRate)
        case .encoded(let data, let fileExtension):
            name = key + "." + fileExtension
            let output = try AtomicOutput(destination: folder.appendingPathComponent(name))
            defer { output.discard() }
            try output.write(data)
            try output.commit()
        }
        let metadata = Metadata(audio: name, voice: voice, words: speech.words, created: Date().timeIntervalSince1970)
        let output = try AtomicOutput(destination: metadataURL(for: key))
        defer { output.discard() }
        try output.write(JSONEncoder().encode(metadata))
        try output.commit()
        // PCM we just encoded is known; encoded responses are decoded once here to check and measure them.
        if let known { return known }
        guard let entry = lookup(key) else {
            throw AudioError(.corrupt, subject: folder.appendingPathComponent(name).path, reason: "the synthesized audio does not decode")
        }
        return entry
    }

    /// Deletes least-recently-used entries until the cache holds at most `maxBytes`.
    public func evict() {
        let manager = FileManager.default
        guard let enumerator = manager.enumerator(at: directory, includingPropertiesForKeys: [.contentModificationDateKey, .fileSizeKey]) else { return }
        var entries: [(metadata: URL, files: [URL], size: Int, used: Date)] = []
        var sizes: [String: Int] = [:]
        var metadataFiles: [URL] = []
        for case let url as URL in enumerator {
            let values = try? url.resourceValues(forKeys: [.fileSizeKey, .contentModificationDateKey])
            let key = url.deletingPathExtension().lastPathComponent
            sizes[key, default: 0] += values?.fileSize ?? 0
            if url.pathExtension == "json" { metadataFiles.append(url) }
        }
        var total = sizes.values.reduce(0, +)
        guard total > maxBytes else { return }
        for metadata in metadataFiles {
            let key = metadata.deletingPathExtension().lastPathComponent
            let used = (try? metadata.resourceValues(forKeys: [.contentModificationDateKey]).contentModificationDate) ?? .distantPast
            let siblings = (try? manager.contentsOfDirectory(at: metadata.deletingLastPathComponent(), includingPropertiesForKeys: nil))?
                .filter { $0.deletingPathExtension().lastPathComponent == key } ?? [metadata]
            entries.append((metadata, siblings, sizes[key] ?? 0, used))
        }
        for entry in entries.sorted(by: { $0.used < $1.used }) where total > maxBytes {
            try? manager.removeItem(at: entry.metadata)
            for file in entry.files where file != entry.metadata { try? manager.removeItem(at: file) }
            total -= entry.size
        }
    }

    private struct Metadata: Codable {
        var audio: String
        var voice: String
        var words: [WordTiming]?
        var created: Double
    }
}
