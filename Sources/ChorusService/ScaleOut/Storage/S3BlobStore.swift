import ChorusS3
import Foundation
import NIOCore

/// Blobs as objects in an S3-compatible bucket, under the location's prefix. A PUT is atomic in S3 (an object is
/// replaced whole), and a multipart upload is visible only once completed. The client's `S3Error`s become
/// `StorageError`s here, the one place they are converted.
struct S3BlobStore: BlobStore {
    let client: S3Client

    var description: String { client.location.description }

    func put(_ data: Data, name: String, contentType: String) async throws {
        try await converted { try await client.put(client.location.key(name), body: ByteBuffer(data: data), contentType: contentType) }
    }

    func upload(file: URL, name: String, contentType: String) async throws {
        try await converted { try await client.upload(file: file, to: client.location.key(name), contentType: contentType) }
    }

    func read(_ name: String, range: ClosedRange<Int>?) async throws -> (size: Int, bytes: ByteBuffer)? {
        guard let (object, bytes) = try await converted({ try await client.get(client.location.key(name), range: range) }) else { return nil }
        return (object.size, bytes)
    }

    func size(_ name: String) async throws -> Int? { try await converted { try await client.head(client.location.key(name))?.size } }

    func delete(_ name: String) async throws { try await converted { try await client.delete(client.location.key(name)) } }

    func list(prefix: String) async throws -> [String] {
        let base = client.location.key("")
        return try await converted { try await client.list(prefix: client.location.key(prefix)) }.map { String($0.dropFirst(base.count)) }.sorted()
    }

    func presignedURL(_ name: String, expires: Int) -> String? { client.presignedURL(client.location.key(name), expires: expires) }

    private func converted<T>(_ body: () async throws -> T) async throws -> T {
        do {
            return try await body()
        } catch let error as S3Error {
            throw StorageError(error)
        }
    }
}

extension StorageError {
    /// The blob store's error for an S3 client's.
    init(_ error: S3Error) {
        let kind: Kind
        switch error.kind {
        case .unavailable: kind = .unavailable
        case .denied: kind = .denied
        case .notFound: kind = .notFound
        case .invalid: kind = .invalid
        }
        self.init(kind: kind, operation: error.operation, key: error.key, reason: error.reason)
    }
}
