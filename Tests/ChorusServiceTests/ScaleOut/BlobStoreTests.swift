import AsyncHTTPClient
import ChorusFixtures
import ChorusS3
import ChorusTestSupport
import Crypto
import Foundation
import NIOCore
import Testing

@testable import ChorusService

/// Both blob stores through one contract: the local folder, and an S3 bucket on a real S3-compatible server
/// (moto's server mode, `S3TestServer`).
@Suite("Blob stores", .enabled("needs moto's S3 server (pip install 'moto[server]')") { await S3TestServer.shouldRun })
struct BlobStoreTests {
    enum Backend: String, CaseIterable, Sendable { case folder, s3 }

    /// A store on a fresh folder or a fresh bucket; the folder lives as long as the returned value.
    static func store(_ backend: Backend, partSize: Int = 5 * 1_048_576, server: S3TestServer.Mode = .checked)
        async throws -> (any BlobStore, TemporaryDirectory)
    {
        let directory = try TemporaryDirectory()
        switch backend {
        case .folder:
            return (FolderBlobStore(root: directory.url), directory)
        case .s3:
            var client = S3Client(
                location: try S3Location(
                    url: "s3://\(S3TestServer.uniqueBucket("blobs"))/chorus/test",
                    environment: try await S3TestServer.running(server).environment))
            client.partSize = partSize
            try await client.createBucket()
            return (S3BlobStore(client: client), directory)
        }
    }

    /// `count` bytes of a xorshift sequence from `seed` (made on a thread of its own: megabytes take seconds under
    /// the sanitizers, too long to hold a cooperative thread).
    static func bytes(_ count: Int, seed: UInt64) async -> Data {
        await withCheckedContinuation { continuation in
            Thread {
                var state = seed | 1
                var bytes = [UInt8](repeating: 0, count: count)
                for index in 0..<count {
                    state ^= state << 13
                    state ^= state >> 7
                    state ^= state << 17
                    bytes[index] = UInt8(truncatingIfNeeded: state)
                }
                continuation.resume(returning: Data(bytes))
            }.start()
        }
    }

    @Test("put, read whole and in ranges, size, replace, delete", arguments: Backend.allCases)
    func roundTrip(backend: Backend) async throws {
        let (store, _) = try await Self.store(backend)
        let data = await Self.bytes(100_003, seed: 7)
        try await store.put(data, name: "renders/abc/audio.mp3", contentType: "audio/mpeg")
        #expect(try await store.size("renders/abc/audio.mp3") == data.count)
        #expect(try await store.read("renders/abc/audio.mp3").map { Data(buffer: $0) } == data)
        for range in [0...0, 0...1, 5...9_999, 99_000...100_002] {
            let part = try #require(try await store.read("renders/abc/audio.mp3", range: range))
            #expect(part.size == data.count)
            #expect(Data(buffer: part.bytes) == data[range])
        }
        let replacement = await Self.bytes(10, seed: 8)
        try await store.put(replacement, name: "renders/abc/audio.mp3", contentType: "audio/mpeg")
        #expect(try await store.read("renders/abc/audio.mp3").map { Data(buffer: $0) } == replacement)
        try await store.delete("renders/abc/audio.mp3")
        #expect(try await store.read("renders/abc/audio.mp3") == nil)
        #expect(try await store.size("renders/abc/audio.mp3") == nil)
        try await store.delete("renders/abc/audio.mp3")  // twice: no error
    }

    /// On the `open` server: moto's signature check rejects a `/` in a query value (boto3's own listing with such a
    /// prefix fails there the same way), and every listing has one.
    @Test("listing returns the names under a prefix, sorted, and nothing else", arguments: Backend.allCases)
    func listing(backend: Backend) async throws {
        let (store, _) = try await Self.store(backend, server: .open)
        for name in ["renders/b/timeline.json", "renders/a/audio.mp3", "renders/a/render.json", "clips/x.audio", "renders-old/z"] {
            try await store.put(Data(name.utf8), name: name, contentType: "application/octet-stream")
        }
        #expect(try await store.list(prefix: "renders/") == ["renders/a/audio.mp3", "renders/a/render.json", "renders/b/timeline.json"])
        #expect(try await store.list(prefix: "renders/a/") == ["renders/a/audio.mp3", "renders/a/render.json"])
        #expect(try await store.list(prefix: "nothing/") == [])
    }

    @Test("a finished file is stored whole, in parts beyond the part size, and the local file stays", arguments: Backend.allCases)
    func storeFile(backend: Backend) async throws {
        let (store, directory) = try await Self.store(backend)
        let data = await Self.bytes(11 * 1_048_576 + 3, seed: 9)  // three parts of 5 MiB at most
        let file = directory.file("render.partial")
        try data.write(to: file)
        try await store.upload(file: file, name: "renders/big/audio.mp3", contentType: "audio/mpeg")
        #expect(FileManager.default.fileExists(atPath: file.path))
        let back = try #require(try await store.read("renders/big/audio.mp3"))
        #expect(SHA256.hash(data: back.readableBytesView) == SHA256.hash(data: data))
        let tail = try #require(try await store.read("renders/big/audio.mp3", range: (data.count - 10)...(data.count - 1)))
        #expect(Data(buffer: tail.bytes) == data.suffix(10))
    }

    /// The signature itself is checked against AWS's published example (`SigV4Tests`): moto cannot verify
    /// presigned URLs, so this shows the URL names the right bucket and object, and carries no secret.
    @Test("a presigned URL fetches the object with no credentials")
    func presigned() async throws {
        let (store, _) = try await Self.store(.s3, server: .open)
        let data = await Self.bytes(4_321, seed: 10)
        try await store.put(data, name: "renders/p/audio.mp3", contentType: "audio/mpeg")
        let url = try #require(store.presignedURL("renders/p/audio.mp3", expires: 300))
        #expect(!url.contains(try await S3TestServer.running(.open).secretAccessKey) && url.contains("X-Amz-Signature="))
        let response = try await HTTPClient.shared.execute(HTTPClientRequest(url: url), timeout: .seconds(10))
        #expect(response.status == .ok)
        #expect(Data(buffer: try await response.body.collect(upTo: 1 << 20)) == data)
        #expect(FolderBlobStore(root: URL(fileURLWithPath: "/tmp")).presignedURL("x", expires: 60) == nil)
    }

    @Test("a wrong secret is refused by the server's own signature check, and the error does not carry it")
    func wrongSecret() async throws {
        var environment = try await S3TestServer.running().environment
        environment["AWS_SECRET_ACCESS_KEY"] = "not-the-secret-5a4b3c"
        let client = S3Client(location: try S3Location(url: "s3://\(S3TestServer.uniqueBucket("denied"))", environment: environment))
        await #expect {
            try await client.createBucket()
        } throws: { error in
            guard let error = error as? S3Error else { return false }
            return error.kind == .denied && error.description.contains("SignatureDoesNotMatch") && !error.description.contains("not-the-secret")
        }
    }

    @Test("an unreachable store fails as unavailable, naming the endpoint, after its retries")
    func unreachable() async throws {
        let refusing = try RefusingPort()  // connections refused, and the port kept from other tests' servers
        let port = refusing.port
        defer { _ = refusing }
        var environment = try await S3TestServer.running().environment
        environment["AWS_ENDPOINT_URL_S3"] = "http://127.0.0.1:\(port)"
        let store = S3BlobStore(client: S3Client(location: try S3Location(url: "s3://nowhere-bucket", environment: environment)))
        await #expect {
            try await store.put(Data("x".utf8), name: "a", contentType: "text/plain")
        } throws: { error in
            guard let error = error as? StorageError else { return false }
            return error.isUnavailable && error.description.contains("127.0.0.1:\(port)")
                && !error.description.contains(environment["AWS_SECRET_ACCESS_KEY"]!)
        }
    }
}
