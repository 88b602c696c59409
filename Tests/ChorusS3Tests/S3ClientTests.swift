import ChorusFixtures
import Foundation
import Testing

@testable import ChorusS3

/// The S3 client's failure handling, against a scripted server (`StubServer`) that fails where a real one can:
/// retries of idempotent requests on 5xx, no retry on a client error, and multipart uploads aborted on failure.
@Suite("S3 client failures")
struct S3ClientTests {
    static func client(_ server: StubServer, partSize: Int = 5 * 1_048_576) throws -> S3Client {
        var client = S3Client(
            location: try S3Location(
                url: "s3://stub-bucket/p",
                environment: [
                    "AWS_ACCESS_KEY_ID": "AKID", "AWS_SECRET_ACCESS_KEY": "stub-secret-1234", "AWS_ENDPOINT_URL_S3": server.baseURL,
                ]))
        client.partSize = partSize
        return client
    }

    static func error(_ status: Int, _ code: String) -> StubServer.Response {
        StubServer.Response(
            status: status, headers: ["Content-Type": "application/xml"],
            body: Data("<?xml version=\"1.0\"?><Error><Code>\(code)</Code><Message>scripted &amp; failing</Message></Error>".utf8))
    }

    @Test("a 503 is retried (three attempts in all); a fourth is never made")
    func retries() async throws {
        let failures = Counter()
        let server = try StubServer { request in
            failures.next() <= 2 ? Self.error(503, "SlowDown") : .init(status: 200)
        }
        defer { server.stop() }
        try await Self.client(server).put("k", body: .init(string: "x"), contentType: "text/plain")
        #expect(server.requests.count == 3)
        #expect(
            server.requests.allSatisfy { request in
                request.method == "PUT" && request.path == "/stub-bucket/k"
                    && request.headers.contains { $0.key.lowercased() == "authorization" && $0.value.hasPrefix("AWS4-HMAC-SHA256 Credential=AKID/") }
            })

        let always = try StubServer { _ in Self.error(503, "SlowDown") }
        defer { always.stop() }
        await #expect {
            try await Self.client(always).put("k", body: .init(string: "x"), contentType: "text/plain")
        } throws: { error in
            (error as? S3Error).map { $0.isUnavailable && $0.description.contains("HTTP 503 SlowDown: scripted & failing") } ?? false
        }
        #expect(always.requests.count == 3)
    }

    @Test("a client error is not retried and names the object")
    func clientError() async throws {
        let server = try StubServer { _ in Self.error(400, "InvalidArgument") }
        defer { server.stop() }
        await #expect {
            try await Self.client(server).put("renders/x/audio.mp3", body: .init(string: "x"), contentType: "audio/mpeg")
        } throws: { error in
            (error as? S3Error).map { $0.kind == .invalid && $0.description.contains("renders/x/audio.mp3") } ?? false
        }
        #expect(server.requests.count == 1)
    }

    @Test("a multipart upload that fails part-way, or whose completion reports an error, is aborted", arguments: [2, 0])
    func aborted(failingPart: Int) async throws {
        let server = try StubServer { request in
            switch (request.method, request.query["partNumber"]) {
            case ("POST", _) where request.query["uploads"] != nil:
                return .init(status: 200, body: Data("<InitiateMultipartUploadResult><UploadId>up-1</UploadId></InitiateMultipartUploadResult>".utf8))
            case ("PUT", let part?):
                return Int(part) == failingPart ? Self.error(400, "EntityTooSmall") : .init(status: 200, headers: ["ETag": "\"etag-\(part)\""])
            case ("POST", _):
                return .init(status: 200, body: Data("<Error><Code>InternalError</Code><Message>completion failed</Message></Error>".utf8))
            default:
                return .init(status: 204)
            }
        }
        defer { server.stop() }
        let directory = try TemporaryDirectory()
        let file = directory.file("upload.bin")
        try Data(count: 3 * 1024 + 5).write(to: file)
        await #expect(throws: S3Error.self) {
            try await Self.client(server, partSize: 1024).upload(file: file, to: "big", contentType: "audio/mpeg")
        }
        let requests = server.requests
        let aborts = requests.filter { $0.method == "DELETE" && $0.query["uploadId"] == "up-1" }
        #expect(aborts.count == 1)
        #expect(requests.last?.method == "DELETE")
        let parts = requests.filter { $0.method == "PUT" }.compactMap { $0.query["partNumber"].flatMap { Int($0) } }
        #expect(parts == (failingPart == 0 ? [1, 2, 3, 4] : [1, 2]))
        if failingPart == 0 {
            let completion = try #require(requests.first { $0.method == "POST" && $0.query["uploadId"] == "up-1" })
            let body = String(decoding: completion.body, as: UTF8.self)
            #expect(body.contains("<Part><PartNumber>4</PartNumber><ETag>\"etag-4\"</ETag></Part>"))
        }
    }
}

@Suite("XML fields")
struct XMLFieldsTests {
    @Test("fields are found in order and unescaped; a bare & or an unknown entity is kept as it is")
    func fields() {
        let document = "<R><Key>a&amp;b &lt;c&gt; &#233;&#xE9;</Key><Key>x & y &bogus;</Key><Code>NoSuchKey</Code></R>"
        #expect(XMLFields.values("Key", in: document) == ["a&b <c> éé", "x & y &bogus;"])
        #expect(XMLFields.value("Code", in: document) == "NoSuchKey" && XMLFields.value("Missing", in: document) == nil)
    }
}

/// A thread-safe counter for scripted servers.
final class Counter: @unchecked Sendable {
    private let lock = NSLock()
    private var value = 0
    func next() -> Int {
        lock.lock()
        defer { lock.unlock() }
        value += 1
        return value
    }
}
