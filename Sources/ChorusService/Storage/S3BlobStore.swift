import Foundation
import NIOCore

/// Blobs as objects in an S3-compatible bucket, under the location's prefix. A PUT is atomic in S3 (an object is
/// replaced whole), and a multipart upload is visible only once completed.
struct S3BlobStore: BlobStore {
    let client: S3Client

    var description: String { client.location.description }

    func put(_ data: Data, name: String, contentType: String) async throws {
        try await client.put(client.location.key(name), body: ByteBuffer(data: data), contentType: contentType)
    }

    func upload(file: URL, name: String, contentType: String) async throws {
        try await client.upload(file: file, to: client.location.key(name), contentType: contentType)
    }

    func read(_ name: String, range: ClosedRange<Int>?) async throws -> (size: Int, bytes: ByteBuffer)? {
        guard let (object, bytes) = try await client.get(client.location.key(name), range: range) else { return nil }
        return (object.size, bytes)
    }

    func size(_ name: String) async throws -> Int? { try await client.head(client.location.key(name))?.size }

    func delete(_ name: String) async throws { try await client.delete(client.location.key(name)) }

    func list(prefix: String) async throws -> [String] {
        let base = client.location.key("")
        return try await client.list(prefix: client.location.key(prefix)).map { String($0.dropFirst(base.count)) }.sorted()
    }

    func presignedURL(_ name: String, expires: Int) -> String? { client.presignedURL(client.location.key(name), expires: expires) }
}
