import ChorusAudio
import ChorusOutbound
import ChorusSupport
import ChorusWire
import Crypto
import Foundation
import Hummingbird

/// Uploaded recordings, named by the SHA-256 of their bytes: the audio in `clips/<id>.audio`, what the clip is and
/// when it expires in the embedded database (table `clips`; the audio is written first, so a record always has its
/// audio, and audio without a record is an orphan the sweep removes). The same bytes again refresh the expiry.
actor ClipStore {
    struct Record: Codable {
        var info: ClipInfo
        var expiresAt: Double
    }

    private let folder: URL
    private let retention: Double
    private let maxSeconds: Double
    private let pool: WorkerPool
    private let database: LocalDatabase
    /// Where clips are published for other instances, if anywhere.
    private let shared: SharedStorage?

    init(folder: URL, retention: Double, maxSeconds: Double, pool: WorkerPool, database: LocalDatabase, shared: SharedStorage? = nil) {
        self.folder = folder
        self.retention = retention
        self.maxSeconds = maxSeconds
        self.pool = pool
        self.database = database
        self.shared = shared
    }

    /// A clip's id: the SHA-256 of its bytes, `idLength` lowercase hex digits.
    static func id(of data: Data) -> String { Hex.string(SHA256.hash(data: data)) }
    static let idLength = 64

    private func audioURL(_ id: String) -> URL { folder.appendingPathComponent(id + ".audio") }

    /// Clips whose audio is being written and recorded (the sweep leaves their audio alone).
    private var writing: Set<String> = []

    /// Moves the records of earlier versions (`clips/<id>.json` beside the audio) into the database, once.
    func load() async throws {
        for name in (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? [] where name.hasSuffix(".json") {
            let file = folder.appendingPathComponent(name)
            if let id = DataDirectory.validID(String(name.dropLast(5)), length: Self.idLength), let data = try? Data(contentsOf: file),
                let record = try? JSONDecoder().decode(Record.self, from: data)
            {
                try await save(id, record)
            }
            try? FileManager.default.removeItem(at: file)
        }
    }

    private func save(_ id: String, _ record: Record) async throws {
        try await database.rows(
            """
            INSERT INTO clips (id, record, expires_at) VALUES (?, ?, ?)
            ON CONFLICT (id) DO UPDATE SET record = excluded.record, expires_at = excluded.expires_at
            """, [.text(id), .text(String(decoding: try JSONEncoder().encode(record), as: UTF8.self)), .float(record.expiresAt)],
            operation: "record a clip")
    }

    /// Stores `data` after decoding it to the end; returns what it is and whether it is new. A clip lives `retention`
    /// from when its record is written: a decode that took a while (seconds under a sanitizer) must not leave a record
    /// born expired, which a sweep running while the upload finishes would delete while its audio is still being
    /// written, leaving the audio behind.
    /// - Throws: `ServiceError` 415 (not audio), 422 (damaged, empty or longer than allowed).
    func add(_ data: Data) async throws -> (info: ClipInfo, created: Bool) {
        let id = Self.id(of: data)
        if var record = try await lookup(id, now: Date().timeIntervalSince1970) {
            record.expiresAt = Date().timeIntervalSince1970 + retention
            let encoded = try JSONEncoder().encode(record)
            try await publish { try await $0.publishClipRecord(id, record: encoded) }
            try await save(id, record)
            return (record.info, false)
        }
        writing.insert(id)
        defer { writing.remove(id) }
        let info = try await probe(data, id: id, field: "body")
        let record = Record(info: info, expiresAt: Date().timeIntervalSince1970 + retention)
        let encoded = try JSONEncoder().encode(record)
        // Published before it is recorded here: once a client has the id, every instance can find the clip.
        try await publish { try await $0.publishClip(id, audio: data, record: encoded) }
        try DataDirectory.write(data, to: audioURL(id))
        try await save(id, record)
        return (info, true)
    }

    /// Decodes `data` on the worker threads to describe it, refusing what cannot be rendered.
    func probe(_ data: Data, id: String, field: String) async throws -> ClipInfo {
        let maxSeconds = self.maxSeconds
        let result: Result<ClipInfo, AudioError> = try await pool.run {
            do {
                let reader = try AudioFileReader(data: data, name: field)
                let frames = try reader.readToEnd { _ in }
                let rate = reader.outputFormat.sampleRate
                return .success(
                    ClipInfo(
                        id: id, duration: AudioFormat(sampleRate: rate, channels: 1).roundedSeconds(frames: frames),
                        samples: frames, sampleRate: rate, channels: reader.outputFormat.channels,
                        codec: reader.info.codec, container: reader.info.container))
            } catch let error as AudioError {
                return .failure(error)
            }
        }
        switch result {
        case .failure(let error):
            let unsupported = error.code == .unsupportedFormat
            throw ServiceError(
                unsupported ? .unsupportedMediaType : .unprocessableContent, unsupported ? .unsupportedMedia : .invalidAudio,
                "\(field): \(error.reason)" + (error.underlying.map { " (\($0))" } ?? ""), field: field)
        case .success(let info):
            guard info.duration <= maxSeconds else {
                throw ServiceError.invalid(
                    "\(field): \(info.duration) s of audio; clips may be at most \(Int(maxSeconds)) s",
                    field: field, code: .clipTooLong)
            }
            return info
        }
    }

    private func publish(_ body: (SharedStorage) async throws -> Void) async throws {
        if let shared { try await body(shared) }
    }

    /// The clip `id` if it exists and has not expired, here or (copied from there) in the shared storage.
    /// - Throws: `StorageError` (503) when the shared storage cannot be reached, `DatabaseError`/`POSIXError`.
    func get(_ id: String, now: Double = Date().timeIntervalSince1970) async throws -> (url: URL, info: ClipInfo)? {
        guard let id = DataDirectory.validID(id, length: Self.idLength) else { return nil }
        if let record = try await lookup(id, now: now) { return (audioURL(id), record.info) }
        guard let shared, let (audio, encoded) = try await shared.clip(id), let record = try? JSONDecoder().decode(Record.self, from: encoded),
            record.expiresAt > now, Self.id(of: audio) == id
        else { return nil }
        writing.insert(id)
        defer { writing.remove(id) }
        try DataDirectory.write(audio, to: audioURL(id))
        try await save(id, record)
        return (audioURL(id), record.info)
    }

    private func lookup(_ id: String, now: Double) async throws -> Record? {
        let rows = try await database.rows(
            "SELECT record FROM clips WHERE id = ? AND expires_at > ?", [.text(id), .float(now)], operation: "look up a clip")
        guard let json = rows.first?.column("record")?.string, let record = try? JSONDecoder().decode(Record.self, from: Data(json.utf8)),
            FileManager.default.fileExists(atPath: audioURL(id).path)
        else { return nil }
        return record
    }

    /// Deletes expired clips (records first, then audio) and audio without a record; returns how many. One sweep at a
    /// time (the service's own and one asked for): one running beside another could find no expired record and return
    /// while the other was between deleting a record and its audio (seen under AddressSanitizer in CI).
    func sweep(now: Double = Date().timeIntervalSince1970) async throws -> Int {
        try await sweeps.run { try await self.sweepNow(now: now) }
    }

    private let sweeps = SerialChanges()

    private func sweepNow(now: Double) async throws -> Int {
        let expired = try await database.rows(
            "DELETE FROM clips WHERE expires_at <= ? RETURNING id", [.float(now)], operation: "sweep clips",
            background: true)
        var removed = 0
        for row in expired {
            guard let id = row.column("id")?.string.flatMap({ DataDirectory.validID($0, length: Self.idLength) }), !writing.contains(id) else {
                continue
            }
            try? FileManager.default.removeItem(at: audioURL(id))
            removed += 1
        }
        let recorded = Set(try await database.rows("SELECT id FROM clips", operation: "sweep clips").compactMap { $0.column("id")?.string })
        for name in (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? [] where name.hasSuffix(".audio") {
            let id = String(name.dropLast(6))
            // An orphan: its record never written (a crash between the two), or one an upload is about to write — so
            // only when it is older than a minute.
            guard !recorded.contains(id), !writing.contains(id),
                let modified = (try? FileManager.default.attributesOfItem(atPath: audioURL(id).path))?[.modificationDate] as? Date,
                Date().timeIntervalSince(modified) > 60
            else { continue }
            try? FileManager.default.removeItem(at: audioURL(id))
            removed += 1
        }
        return removed
    }
}
