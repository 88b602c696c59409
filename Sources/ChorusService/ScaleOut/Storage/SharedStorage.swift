import ChorusAudio
import ChorusConversation
import ChorusS3
import Foundation
import NIOCore

/// The blobs several instances share (`--storage s3://bucket/prefix`, or a folder every instance mounts):
/// finished renders and uploaded clips, under the same names as in the data folder. Each instance keeps its
/// own data folder as a working area and a cache; what one instance finishes is published here, and any other
/// finds it here when it is asked for an id it does not know.
///
/// Names: `renders/<id>/render.json` (published last: a render without it is not there), `renders/<id>/audio.<format>`,
/// `timeline.json`, `captions.vtt`, `waveform.dat`; `clips/<id>.audio` and `clips/<id>.json` (the record last).
struct SharedStorage: Sendable {
    let blobs: any BlobStore
    /// Answer audio requests with a `302` to a presigned URL of the bucket (when the store can make one).
    let redirectAudio: Bool

    /// The store a `--storage` value names: `s3://bucket/prefix` (credentials and endpoint from `environment`),
    /// or an absolute folder path (`/mnt/chorus` or `file:///mnt/chorus`).
    /// - Throws: `ConfigurationError` naming the setting that is unusable.
    static func make(_ setting: String, redirectAudio: Bool, environment: [String: String]) throws -> SharedStorage {
        if setting.hasPrefix("s3://") {
            do {
                return SharedStorage(
                    blobs: S3BlobStore(client: S3Client(location: try S3Location(url: setting, environment: environment))),
                    redirectAudio: redirectAudio)
            } catch let error as S3LocationError {
                throw ConfigurationError(
                    setting: error.setting ?? ServiceConfiguration.Setting.storage.rawValue, value: error.value, reason: error.reason)
            }
        }
        let path = setting.hasPrefix("file://") ? String(setting.dropFirst(7)) : setting
        guard path.hasPrefix("/") else {
            throw ConfigurationError(setting: .storage, value: setting, reason: "is neither s3://bucket/prefix nor an absolute folder path")
        }
        do {
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        } catch {
            throw ConfigurationError(setting: .storage, value: setting, reason: "cannot create the folder (\(error.localizedDescription))")
        }
        return SharedStorage(blobs: FolderBlobStore(root: URL(fileURLWithPath: path)), redirectAudio: redirectAudio)
    }

    // MARK: renders

    /// Publishes a finished render from its local folder: the audio and whichever small files exist, then `render.json`.
    /// A publish that fails part-way removes what it wrote (as far as the storage lets it), so nothing is left that no
    /// record names.
    func publish(_ stored: StoredRender, from folder: RenderFolder) async throws {
        let id = stored.manifest.id
        guard let format = stored.format, stored.isDone else {
            throw StorageError(kind: .invalid, operation: "publish", key: id, reason: "the render has no audio")
        }
        do {
            let audio = RenderFolder.audioName(format)
            try await blobs.upload(file: folder.audioURL(format), name: RenderFolder.objectName(id, audio), contentType: format.mimeType)
            for file in RenderFolder.sideFiles {
                guard let data = try? Data(contentsOf: folder.url(file)) else { continue }
                try await blobs.put(data, name: RenderFolder.objectName(id, file.rawValue), contentType: file.contentType)
            }
            try await publishRecord(stored)
        } catch {
            try? await remove(stored)
            throw error
        }
    }

    /// Whether the render's audio is in the storage, whole.
    func hasAudio(of stored: StoredRender) async throws -> Bool {
        guard let audio = stored.audioName else { return false }
        return try await blobs.size(RenderFolder.objectName(stored.manifest.id, audio)) == stored.audioBytes
    }

    private func publishRecord(_ stored: StoredRender) async throws {
        try await blobs.put(
            try JSONEncoder().encode(stored), name: RenderFolder.objectName(stored.manifest.id, RenderFolder.File.record.rawValue),
            contentType: RenderFolder.File.record.contentType)
    }

    /// The render's record, if some instance published it and it is one this service could have written: its id is
    /// the one asked for, and a done one has an output format (its audio's name follows from it: names from the storage
    /// become paths here).
    func record(_ id: String) async throws -> StoredRender? {
        guard let data = try await blobs.read(RenderFolder.objectName(id, RenderFolder.File.record.rawValue)),
            let stored = try? JSONDecoder().decode(StoredRender.self, from: Data(buffer: data)), stored.manifest.id == id,
            !stored.isDone || stored.format != nil
        else { return nil }
        return stored
    }

    /// Copies the render's small files that exist into `folder` (atomically each).
    func fetchFiles(of stored: StoredRender, into folder: RenderFolder) async throws {
        try FileManager.default.createDirectory(at: folder.url, withIntermediateDirectories: true)
        for file in RenderFolder.sideFiles {
            guard let data = try await blobs.read(RenderFolder.objectName(stored.manifest.id, file.rawValue)) else { continue }
            try DataDirectory.write(Data(buffer: data), to: folder.url(file))
        }
    }

    /// Copies the render's audio into `folder`.
    func fetchAudio(of stored: StoredRender, into folder: RenderFolder) async throws {
        let name = audioObject(of: stored)
        guard let format = stored.format, stored.audioBytes > 0, let (_, data) = try await blobs.read(name, range: 0...(stored.audioBytes - 1)) else {
            throw StorageError(kind: .notFound, operation: "read", key: name, reason: "the audio is missing")
        }
        try FileManager.default.createDirectory(at: folder.url, withIntermediateDirectories: true)
        try DataDirectory.write(Data(buffer: data), to: folder.audioURL(format))
    }

    /// The name of a render's audio in the storage (of a render without audio: a name nothing has).
    private func audioObject(of stored: StoredRender) -> String {
        RenderFolder.objectName(stored.manifest.id, stored.audioName ?? "audio")
    }

    /// `range` of the render's audio.
    func audio(of stored: StoredRender, range: ClosedRange<Int>) async throws -> ByteBuffer {
        guard let (_, bytes) = try await blobs.read(audioObject(of: stored), range: range) else {
            throw StorageError(kind: .notFound, operation: "read", key: audioObject(of: stored), reason: "the audio is missing")
        }
        return bytes
    }

    /// A presigned URL of the render's audio, valid an hour, or until the render expires or `until` (a signed link's
    /// expiry), if sooner; `nil` when audio is not redirected or the store cannot presign.
    func audioRedirect(of stored: StoredRender, until: Double? = nil, now: Double = Date().timeIntervalSince1970) -> String? {
        guard redirectAudio else { return nil }
        let expires = Int(max(1, min(3600, stored.expiresAt - now, (until ?? .infinity) - now)))
        return blobs.presignedURL(audioObject(of: stored), expires: expires)
    }

    /// Removes the render: its record first (so it is no longer found), then its files.
    func remove(_ stored: StoredRender) async throws {
        try await removeFiles(of: stored.manifest.id, format: stored.format)
    }

    /// Ids of every render that has files here.
    func renderIDs() async throws -> Set<String> {
        Set(try await blobs.list(prefix: "renders/").compactMap { name in name.split(separator: "/").dropFirst().first.map(String.init) })
    }

    // MARK: clips

    func publishClip(_ id: String, audio: Data, record: Data) async throws {
        try await blobs.put(audio, name: "clips/\(id).audio", contentType: "application/octet-stream")
        try await blobs.put(record, name: "clips/\(id).json", contentType: "application/json")
    }

    func publishClipRecord(_ id: String, record: Data) async throws {
        try await blobs.put(record, name: "clips/\(id).json", contentType: "application/json")
    }

    /// The clip's bytes and record, if some instance published it.
    func clip(_ id: String) async throws -> (audio: Data, record: Data)? {
        guard let record = try await blobs.read("clips/\(id).json"), let audio = try await blobs.read("clips/\(id).audio") else { return nil }
        return (Data(buffer: audio), Data(buffer: record))
    }

    func removeClip(_ id: String) async throws {
        try await blobs.delete("clips/\(id).json")
        try await blobs.delete("clips/\(id).audio")
    }

    // MARK: synthesis cache

    /// The synthesis cache's shared tier: `cache/v1/<key>.json` and its audio, so a message synthesized by one instance
    /// is a cache hit on every other. Not swept here (entries are small and content-addressed; a bucket lifecycle rule
    /// on `<prefix>/cache/` bounds them).
    struct CacheTier: SharedCacheStore {
        let blobs: any BlobStore

        func read(_ name: String) async throws -> Data? { try await blobs.read(name).map { Data(buffer: $0) } }
        func write(_ name: String, _ data: Data) async throws { try await blobs.put(data, name: name, contentType: "application/octet-stream") }
    }

    var cacheTier: CacheTier { CacheTier(blobs: blobs) }

    // MARK: retention

    private struct Expiry: Decodable { var expiresAt: Double }

    /// Removes every render and clip whose record says it has expired, whichever instance made it; returns how
    /// many of each. Idempotent, so instances sweeping at once do no harm. Files published without their record
    /// (an instance that died mid-publish) are left alone: they are never served.
    func sweep(now: Double = Date().timeIntervalSince1970) async throws -> (renders: Int, clips: Int) {
        var renders = 0
        for id in try await renderIDs() where DataDirectory.validID(id, length: RenderIdentity.length) != nil {
            guard let stored = try await record(id), stored.expiresAt <= now else { continue }
            try await remove(stored)
            renders += 1
        }
        return (renders, try await sweepClips(now: now))
    }

    /// Removes render `id`'s files whatever state its record is in (`format`: its audio's, if known): the sweep of
    /// shared jobs (`--database`), whose rows say what has expired.
    func removeFiles(of id: String, format: OutputFileFormat?) async throws {
        try await blobs.delete(RenderFolder.objectName(id, RenderFolder.File.record.rawValue))
        let files = (format.map { [RenderFolder.audioName($0)] } ?? []) + RenderFolder.sideFiles.map(\.rawValue)
        for file in files { try await blobs.delete(RenderFolder.objectName(id, file)) }
    }

    /// Removes every clip whose record says it has expired; returns how many.
    func sweepClips(now: Double = Date().timeIntervalSince1970) async throws -> Int {
        var clips = 0
        for name in try await blobs.list(prefix: "clips/") where name.hasSuffix(".json") {
            let id = String(name.dropFirst("clips/".count).dropLast(".json".count))
            guard DataDirectory.validID(id, length: ClipStore.idLength) != nil, let data = try await blobs.read(name),
                let expiry = try? JSONDecoder().decode(Expiry.self, from: Data(buffer: data)), expiry.expiresAt <= now
            else { continue }
            try await removeClip(id)
            clips += 1
        }
        return clips
    }
}
