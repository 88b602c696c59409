import Foundation
import NIOCore

/// Where the service keeps bytes (render audio, waveform base, captions, uploaded clips, synthesized speech):
/// a local folder (`FolderBlobStore`, the default) or an S3-compatible bucket (`S3BlobStore`). Names are
/// relative paths such as `renders/<id>/audio.mp3`; a blob is written whole or not at all, so a reader never sees
/// a partial one.
protocol BlobStore: Sendable {
    /// `folder /var/lib/chorus` or `s3://bucket/prefix`, for messages and logs.
    var description: String { get }
    /// Stores `data` under `name`, replacing any blob there.
    func put(_ data: Data, name: String, contentType: String) async throws
    /// Stores a copy of a finished local file under `name` (the file stays).
    func upload(file: URL, name: String, contentType: String) async throws
    /// The blob's bytes (`range` of them if given) and size; `nil` if there is no such blob.
    func read(_ name: String, range: ClosedRange<Int>?) async throws -> (size: Int, bytes: ByteBuffer)?
    /// The blob's size, or `nil` if there is none.
    func size(_ name: String) async throws -> Int?
    /// Removes the blob (no error if there is none).
    func delete(_ name: String) async throws
    /// Names starting with `prefix`, sorted.
    func list(prefix: String) async throws -> [String]
    /// A URL that fetches the blob without credentials for `expires` seconds, if the store can make one.
    func presignedURL(_ name: String, expires: Int) -> String?
}

extension BlobStore {
    func read(_ name: String) async throws -> ByteBuffer? { try await read(name, range: nil)?.bytes }
}
