public import ChorusAudio
import ChorusOutbound
public import ChorusSpeech
import ChorusSupport
public import ChorusWire
import Crypto
public import Foundation

/// Synthesized clips stored by content: the file name is the SHA-256 of a canonical description
/// of everything that shapes the audio (provider, model, voice, settings, output format, text,
/// neighbouring text, cache format version). API keys are never part of it.
///
/// Entries are written atomically (temporary name, then rename; the metadata file last) with their
/// exact length (frames and rate) in the metadata, so a hit is not decoded here: the render decodes
/// it once and checks it against that length, and an entry that fails is `remove`d and synthesized
/// again. Entries are evicted least-recently-used beyond `maxBytes`.
///
/// ```swift
/// let cache = try SynthesisCache(directory: SynthesisCache.defaultDirectory(), maxBytes: 1 << 30)
/// ```
/// A second tier several processes share (the service's `--storage`): whole files by name, `nil` when absent.
/// Reads and writes may fail (it is remote); the cache then behaves as if the tier were not there.
public protocol SharedCacheStore: Sendable {
    func read(_ name: String) async throws -> Data?
    func write(_ name: String, _ data: Data) async throws
}

public final class SynthesisCache: Sendable {
    /// A stored clip.
    public struct Entry: Sendable {
        public var audio: URL
        public var words: [WordTiming]?
        /// What the provider said it left out (`SynthesizedSpeech.notes`).
        public var notes: [String] = []
        /// Frames at `sampleRate` the audio decodes to.
        public var frames: Int
        public var sampleRate: Int
        public var duration: Double { AudioFormat(sampleRate: sampleRate, channels: 1).seconds(frames: frames) }
    }

    static let formatVersion = 1
    public let directory: URL
    public let maxBytes: Int
    /// Entries other processes stored (`cache/v1/<key>.json` and its audio), fetched on a local miss; entries stored
    /// here are published to it.
    public let shared: (any SharedCacheStore)?

    /// `CHORUS_CACHE_DIR`, else `$XDG_CACHE_HOME/chorus`, else `~/.cache/chorus`.
    public static func defaultDirectory(environment: [String: String] = ProcessInfo.processInfo.environment) -> URL {
        if let explicit = environment["CHORUS_CACHE_DIR"], !explicit.isEmpty { return URL(fileURLWithPath: explicit) }
        if let xdg = environment["XDG_CACHE_HOME"], xdg.hasPrefix("/") { return URL(fileURLWithPath: xdg).appendingPathComponent("chorus") }
        let home = environment["HOME"] ?? NSHomeDirectory()
        return URL(fileURLWithPath: home).appendingPathComponent(".cache/chorus")
    }

    /// The default bound of the cache folder: 1 GiB.
    public static let defaultMaxBytes = 1024 * 1_048_576

    /// Opens (creating if needed) a cache folder.
    /// - Throws: `AudioError.writeFailed` when the folder cannot be created.
    public init(directory: URL, maxBytes: Int = SynthesisCache.defaultMaxBytes, shared: (any SharedCacheStore)? = nil) throws {
        self.directory = directory.appendingPathComponent("v\(Self.formatVersion)")
        self.maxBytes = maxBytes
        self.shared = shared
        do {
            try FileManager.default.createDirectory(at: self.directory, withIntermediateDirectories: true)
        } catch {
            throw AudioError(
                .writeFailed, subject: directory.path, reason: "cannot create the voice cache folder",
                underlying: error.localizedDescription)
        }
    }

    /// The cache key for one synthesis request.
    public static func key(
        provider: String, voice: String, format: String, settings: [String: JSONValue], text: String,
        previousText: String? = nil, nextText: String? = nil
    ) -> String {
        var description: [String: JSONValue] = [
            "cache_version": .number(Double(formatVersion)), "provider": .string(provider), "voice": .string(voice),
            "format": .string(format), "settings": .object(settings), "text": .string(text),
        ]
        if let previousText { description["previous_text"] = .string(previousText) }
        if let nextText { description["next_text"] = .string(nextText) }
        let digest = SHA256.hash(data: Data(JSONValue.object(description).canonicalText.utf8))
        return Hex.string(digest)
    }

    private func folder(for key: String) -> URL { directory.appendingPathComponent(String(key.prefix(2))) }
    private func metadataURL(for key: String) -> URL { folder(for: key).appendingPathComponent(key + ".json") }

    /// The entry for `key`, if its metadata and audio file are there. The audio is not decoded here
    /// (entries written before lengths were recorded are, once).
    public func lookup(_ key: String) -> Entry? {
        let metadataURL = metadataURL(for: key)
        guard let data = try? Data(contentsOf: metadataURL),
            let metadata = try? JSONDecoder().decode(Metadata.self, from: data)
        else { return nil }
        let audio = folder(for: key).appendingPathComponent(metadata.audio)
        guard FileManager.default.fileExists(atPath: audio.path) else {
            remove(key)
            return nil
        }
        var frames = metadata.frames
        var rate = metadata.sample_rate
        if frames == nil || rate == nil {
            guard let decoded = try? AudioFileReader(url: audio).readAll() else {
                remove(key)
                return nil
            }
            frames = decoded.frameCount
            rate = decoded.format.sampleRate
        }
        // Mark as recently used for eviction.
        utimes(metadataURL.path, nil)
        return Entry(audio: audio, words: metadata.words, notes: metadata.notes ?? [], frames: frames!, sampleRate: rate!)
    }

    /// Deletes the entry for `key` (it failed to decode when rendered).
    public func remove(_ key: String) {
        let folder = folder(for: key)
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
        try? FileManager.default.removeItem(at: metadataURL(for: key))
        for name in names where name.hasPrefix(key + ".") { try? FileManager.default.removeItem(at: folder.appendingPathComponent(name)) }
    }

    /// Stores a synthesized clip under `key` and returns it as an entry, with its samples: PCM is stored as FLAC;
    /// encoded audio as it came, decoded once to check it and measure it — and that decoding is what the render uses,
    /// so a provider's answer is decoded once.
    /// - Throws: `AudioError` when the clip is empty, does not decode, or cannot be written.
    public func store(_ key: String, speech: SynthesizedSpeech, voice: String) throws -> (entry: Entry, samples: AudioBuffer) {
        let folder = folder(for: key)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let name: String
        let frames: Int
        let rate: Int
        let samples: AudioBuffer
        switch speech.audio {
        case .pcm(let buffer):
            samples = buffer
            guard buffer.frameCount > 0 else {
                throw AudioError(.emptyAudio, subject: "\(voice)", reason: "the provider returned no audio samples")
            }
            name = key + ".flac"
            try AudioFileWriter.write(buffer, to: folder.appendingPathComponent(name))  // atomic itself
            frames = buffer.frameCount
            rate = buffer.format.sampleRate
        case .encoded(let data, let fileExtension):
            let decoded = try AudioFileReader(data: data, name: "\(voice) response").readAll()
            samples = decoded
            name = key + "." + fileExtension
            let output = try AtomicOutput(destination: folder.appendingPathComponent(name))
            defer { output.discard() }
            try output.write(data)
            try output.commit()
            frames = decoded.frameCount
            rate = decoded.format.sampleRate
        }
        let metadata = Metadata(
            audio: name, voice: voice, words: speech.words, notes: speech.notes.isEmpty ? nil : speech.notes,
            created: Date().timeIntervalSince1970, frames: frames, sample_rate: rate)
        let output = try AtomicOutput(destination: metadataURL(for: key))
        defer { output.discard() }
        try output.write(JSONEncoder().encode(metadata))
        try output.commit()
        let entry = Entry(audio: folder.appendingPathComponent(name), words: speech.words, notes: speech.notes, frames: frames, sampleRate: rate)
        return (entry, samples)
    }

    // MARK: the shared tier

    private static func sharedName(_ file: String) -> String { "cache/v\(formatVersion)/\(file)" }

    /// Whether `name` is a name this cache could have given the audio of `key` (`<key>.<extension>`): a name read
    /// from the shared tier becomes a path here.
    private static func isAudioName(_ name: String, of key: String) -> Bool {
        guard name.hasPrefix(key + ".") else { return false }
        let fileExtension = name.dropFirst(key.count + 1)
        return (1...5).contains(fileExtension.count) && fileExtension.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber) }
    }

    /// The entry for `key` from the shared tier, copied here first (audio, then metadata, each atomically); `nil` when
    /// there is no tier, it does not have it, it cannot be reached, or what it holds is unusable.
    public func lookupShared(_ key: String) async -> Entry? {
        guard let shared, Hex.isLowercase(key, length: 64),
            let metadataData = try? await shared.read(Self.sharedName(key + ".json")),
            let metadata = try? JSONDecoder().decode(Metadata.self, from: metadataData), Self.isAudioName(metadata.audio, of: key),
            metadata.frames != nil, metadata.sample_rate != nil,
            let audio = try? await shared.read(Self.sharedName(metadata.audio)), !audio.isEmpty
        else { return nil }
        do {
            let folder = folder(for: key)
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            for (data, destination) in [(audio, folder.appendingPathComponent(metadata.audio)), (metadataData, metadataURL(for: key))] {
                let output = try AtomicOutput(destination: destination)
                defer { output.discard() }
                try output.write(data)
                try output.commit()
            }
        } catch {
            return nil
        }
        return lookup(key)
    }

    /// Publishes entry `key` (stored here) to the shared tier: audio first, metadata last, so a reader never finds
    /// metadata without its audio. Best effort: a failure leaves the entry local only.
    public func publishShared(_ key: String) async {
        guard let shared, let metadataData = try? Data(contentsOf: metadataURL(for: key)),
            let metadata = try? JSONDecoder().decode(Metadata.self, from: metadataData),
            let audio = try? Data(contentsOf: folder(for: key).appendingPathComponent(metadata.audio))
        else { return }
        do {
            try await shared.write(Self.sharedName(metadata.audio), audio)
            try await shared.write(Self.sharedName(key + ".json"), metadataData)
        } catch {
            return
        }
    }

    /// Deletes least-recently-used entries until the cache holds at most `maxBytes`.
    public func evict() {
        let manager = FileManager.default
        guard let enumerator = manager.enumerator(at: directory, includingPropertiesForKeys: [.contentModificationDateKey, .fileSizeKey]) else {
            return
        }
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
            let siblings =
                (try? manager.contentsOfDirectory(at: metadata.deletingLastPathComponent(), includingPropertiesForKeys: nil))?
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
        var notes: [String]?
        var created: Double
        var frames: Int?
        var sample_rate: Int?
    }
}
