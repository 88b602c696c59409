import ChorusAudio
public import ChorusListening
import ChorusSupport
import ChorusWire
import Crypto
public import Foundation

/// Transcripts stored by content: the file name is the SHA-256 of the audio's bytes, the model (its name and the size
/// and time of each of its files, so a model replaced in place is a new one) and the options that shape the words. The
/// same voice note sent again is answered without running the model. One JSON file per transcript, written whole or
/// not at all; at most `maxEntries`, the least recently used removed first; a file that does not read back is a miss.
public final class TranscriptCache: Sendable {
    static let formatVersion = 1
    public let directory: URL
    public let maxEntries: Int
    private let stores = Locked(0)

    /// Where the transcripts of a cache folder (`Chorus.Configuration.cacheDirectory`) are: removing it forgets every
    /// transcript and keeps the synthesized speech.
    public static func folder(in cacheDirectory: URL) -> URL { cacheDirectory.appendingPathComponent("transcripts", isDirectory: true) }

    /// Opens (creating if needed) `<directory>/transcripts/v1`.
    /// - Throws: `AudioError.writeFailed` when the folder cannot be created.
    public init(directory: URL, maxEntries: Int = 5_000) throws {
        self.directory = Self.folder(in: directory).appendingPathComponent("v\(Self.formatVersion)")
        self.maxEntries = max(1, maxEntries)
        do {
            try FileManager.default.createDirectory(at: self.directory, withIntermediateDirectories: true)
        } catch {
            throw AudioError(.writeFailed, subject: "transcript cache", reason: "cannot create its folder", underlying: "\(error)")
        }
    }

    /// The key of `audio` transcribed by the model `identity` names (`SpeechToTextProvider.modelIdentity`) with `options`
    /// (anything else that changes the words: sharpening, a language).
    public static func key(audio: Data, model identity: [String], options: [String]) -> String {
        var hash = SHA256()
        hash.update(data: audio)
        let description = (identity + options).joined(separator: "\n")
        hash.update(data: Data(description.utf8))
        return hash.finalize().map { String(format: "%02x", $0) }.joined()
    }

    private func url(_ key: String) -> URL {
        directory.appendingPathComponent(String(key.prefix(2))).appendingPathComponent(key + ".json")
    }

    /// The stored transcript, if any (and marks it used).
    public func lookup(_ key: String) -> Transcript? {
        let url = url(key)
        guard let data = try? Data(contentsOf: url), let transcript = try? JSONDecoder().decode(Transcript.self, from: data) else { return nil }
        try? FileManager.default.setAttributes([.modificationDate: Date()], ofItemAtPath: url.path)
        return transcript
    }

    /// Stores `transcript` (a failure to write is not an error: the transcript was made, the next one will be made again).
    public func store(_ key: String, _ transcript: Transcript) {
        let url = url(key)
        do {
            try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            let output = try AtomicOutput(destination: url)
            defer { output.discard() }
            try output.write(try JSONEncoder().encode(transcript))
            try output.commit()
        } catch {
            return
        }
        let stored = stores.withLock {
            $0 += 1
            return $0
        }
        if stored % 64 == 0 { evict() }
    }

    /// Removes the least recently used transcripts beyond `maxEntries`.
    public func evict() {
        let keys: [URLResourceKey] = [.contentModificationDateKey]
        guard let walker = FileManager.default.enumerator(at: directory, includingPropertiesForKeys: keys) else { return }
        var files: [(URL, Date)] = []
        for case let url as URL in walker where url.pathExtension == "json" {
            files.append((url, (try? url.resourceValues(forKeys: Set(keys)).contentModificationDate) ?? .distantPast))
        }
        guard files.count > maxEntries else { return }
        for (url, _) in files.sorted(by: { $0.1 < $1.1 }).prefix(files.count - maxEntries) { try? FileManager.default.removeItem(at: url) }
    }
}
