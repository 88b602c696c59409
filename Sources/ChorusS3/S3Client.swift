import AsyncHTTPClient
import ChorusOutbound
import ChorusSupport
import Crypto
package import Foundation
package import NIOCore
import NIOFoundationCompat
import NIOHTTP1

/// A small S3 client on AsyncHTTPClient and `SigV4Signer`: the operations Chorus's blob store needs (put, ranged
/// get, head, delete, list, multipart upload, presigned URLs) against AWS or any S3-compatible server. Every call
/// has a deadline; idempotent calls are retried on a server error or a dropped connection (three attempts, 0.2 s
/// and 0.8 s apart); failures become `S3Error`s that name the operation and the key, never a credential.
package struct S3Client: Sendable {
    package let location: S3Location
    /// Seconds a request may take, plus one per MiB it sends or asks for.
    package var timeoutSeconds: Int64 = 15
    /// Bodies above this go up in parts of this size (S3's minimum part is 5 MiB).
    package var partSize = 8 * 1_048_576
    private var signer: SigV4Signer { SigV4Signer(credentials: location.credentials, region: location.region) }

    package init(location: S3Location) { self.location = location }

    package struct Object: Sendable {
        package var size: Int
        package var etag: String?
        package var contentType: String?
        package var lastModified: String?
    }

    // MARK: objects

    /// Stores `body` under `key` (replacing any object there) in one request.
    package func put(_ key: String, body: ByteBuffer, contentType: String) async throws {
        let hash = Hex.string(SHA256.hash(data: body.readableBytesView))
        _ = try await send(
            "PUT", key: key, headers: [("content-type", contentType)], body: body, payloadHash: hash,
            operation: "put", idempotent: true, expect: [200])
    }

    /// The object's bytes (`range` of them if given) and what S3 says of it; `nil` if there is no such object.
    /// `maxBytes` caps what is read into memory.
    package func get(_ key: String, range: ClosedRange<Int>? = nil, maxBytes: Int = 256 * 1_048_576) async throws -> (Object, ByteBuffer)? {
        var headers: [(String, String)] = []
        if let range { headers.append(("range", "bytes=\(range.lowerBound)-\(range.upperBound)")) }
        let (head, body) = try await send(
            "GET", key: key, headers: headers, operation: "get", idempotent: true,
            expect: [200, 206, 404], maxBytes: maxBytes, expectedBytes: range?.count ?? 0)
        guard head.status != 404 else { return nil }
        var object = Self.object(head.headers, size: body.readableBytes)
        if let total = head.headers.first(name: "content-range")?.split(separator: "/").last.flatMap({ Int($0) }) { object.size = total }
        return (object, body)
    }

    /// What S3 says of the object, or `nil` if there is none.
    package func head(_ key: String) async throws -> Object? {
        let (head, _) = try await send("HEAD", key: key, operation: "head", idempotent: true, expect: [200, 404])
        guard head.status != 404 else { return nil }
        return Self.object(head.headers, size: head.headers.first(name: "content-length").flatMap(Int.init) ?? 0)
    }

    /// Deletes the object (no error if there is none).
    package func delete(_ key: String) async throws {
        _ = try await send("DELETE", key: key, operation: "delete", idempotent: true, expect: [200, 204, 404])
    }

    /// Every key that starts with `prefix`, in S3's (binary) order.
    package func list(prefix: String) async throws -> [String] {
        var keys: [String] = []
        var token: String?
        repeat {
            var query = [("list-type", "2"), ("prefix", prefix)]
            if let token { query.append(("continuation-token", token)) }
            let (_, body) = try await send("GET", key: nil, query: query, operation: "list", idempotent: true, expect: [200])
            let document = String(buffer: body)
            keys += XMLFields.values("Key", in: document)
            token = XMLFields.value("IsTruncated", in: document) == "true" ? XMLFields.value("NextContinuationToken", in: document) : nil
        } while token != nil
        return keys
    }

    /// A URL that lets anyone `GET` the object for `expires` seconds without credentials.
    package func presignedURL(_ key: String, expires: Int, now: Date = Date()) -> String {
        let path = location.path(key)
        return "\(location.origin)\(path)?" + signer.presignedQuery(method: "GET", host: location.host, path: path, expires: expires, date: now)
    }

    /// Creates the bucket (tests and first-time setup); an existing bucket of the same owner is not an error.
    package func createBucket() async throws {
        var body: ByteBuffer?
        if location.region != "us-east-1" {
            body = ByteBuffer(
                string:
                    "<CreateBucketConfiguration xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\"><LocationConstraint>\(location.region)</LocationConstraint></CreateBucketConfiguration>"
            )
        }
        let hash = body.map { Hex.string(SHA256.hash(data: $0.readableBytesView)) } ?? SigV4Signer.emptyPayloadHash
        let (head, response) = try await send(
            "PUT", key: nil, body: body, payloadHash: hash, operation: "create bucket", idempotent: true,
            expect: [200, 409])
        if head.status == 409 && XMLFields.value("Code", in: String(buffer: response)) != "BucketAlreadyOwnedByYou" {
            throw S3Error(kind: .denied, operation: "create bucket", key: location.bucket, reason: Self.reason(head.status, response))
        }
    }

    static func object(_ headers: HTTPHeaders, size: Int) -> Object {
        Object(
            size: size, etag: headers.first(name: "etag"), contentType: headers.first(name: "content-type"),
            lastModified: headers.first(name: "last-modified"))
    }

    // MARK: requests

    /// Signs and sends one request, retrying idempotent ones; answers only with a status in `expect`.
    func send(
        _ method: String, key: String?, query: [(String, String)] = [], headers: [(String, String)] = [], body: ByteBuffer? = nil,
        payloadHash: String = SigV4Signer.emptyPayloadHash, operation: String, idempotent: Bool, expect: Set<Int>,
        maxBytes: Int = 16 * 1_048_576, expectedBytes: Int = 0
    ) async throws -> (OutboundResponse, ByteBuffer) {
        let name = key ?? location.bucket
        return try await (idempotent ? Self.retry : .once).run(
            { _ in
                let (head, data) = try await sendOnce(
                    method, key: key, query: query, headers: headers, body: body, payloadHash: payloadHash,
                    operation: operation, maxBytes: maxBytes, expectedBytes: expectedBytes)
                guard expect.contains(head.status) else {
                    throw S3Error(kind: Self.kind(head.status), operation: operation, key: name, reason: Self.reason(head.status, data))
                }
                return (head, data)
            }, classify: { ($0 as? S3Error)?.isUnavailable == true ? .retry(after: nil) : .fail })
    }

    /// Idempotent requests: three attempts, 0.2 s and 0.8 s apart, when the server is unreachable or answers 429/5xx.
    static let retry = RetryPolicy(maxAttempts: 3, initialDelay: 0.2, multiplier: 4, maxDelay: 0.8, jitter: 0, maxTotal: .infinity)

    private func sendOnce(
        _ method: String, key: String?, query: [(String, String)], headers: [(String, String)], body: ByteBuffer?,
        payloadHash: String, operation: String, maxBytes: Int, expectedBytes: Int
    ) async throws -> (OutboundResponse, ByteBuffer) {
        let path = location.path(key)
        let queryText = SigV4Signer.canonicalQuery(query)
        var request = HTTPClientRequest(url: location.origin + path + (queryText.isEmpty ? "" : "?" + queryText))
        request.method = HTTPMethod(rawValue: method)
        var signed = headers + [("x-amz-content-sha256", payloadHash)]
        if let body { signed.append(("content-length", String(body.readableBytes))) }
        signed += signer.sign(method: method, host: location.host, path: path, query: query, headers: signed, payloadHash: payloadHash, date: Date())
        for (name, value) in signed { request.headers.replaceOrAdd(name: name, value: value) }
        request.headers.replaceOrAdd(name: "host", value: location.host)
        if let body { request.body = .bytes(body) }
        let name = key ?? location.bucket
        let timeout = timeoutSeconds + Int64(((body?.readableBytes ?? 0) + expectedBytes) / 1_048_576)
        do {
            let response = try await OutboundHTTP.send(
                request, timeoutSeconds: timeout, maxBytes: maxBytes, secrets: location.credentials.secrets, readBody: method != "HEAD")
            return (response, response.body)
        } catch let failure as OutboundFailure {
            switch failure {
            case .tooLarge(let limit):
                throw S3Error(kind: .invalid, operation: operation, key: name, reason: "the answer is larger than \(limit) bytes")
            case .timedOut(let seconds):
                throw S3Error(kind: .unavailable, operation: operation, key: name, reason: "no answer from \(location.origin) within \(seconds) s")
            case .unreachable(let reason):
                throw S3Error(kind: .unavailable, operation: operation, key: name, reason: reason)
            }
        }
    }

    static func kind(_ status: Int) -> S3Error.Kind {
        switch status {
        case 401, 403: return .denied
        case 404: return .notFound
        case 429, 500...: return .unavailable
        default: return .invalid
        }
    }

    /// "HTTP 403 SignatureDoesNotMatch: …" from S3's error document: its code and message only (the document may
    /// also echo the string to sign).
    static func reason(_ status: Int, _ body: ByteBuffer) -> String {
        let document = String(buffer: body)
        let code = XMLFields.value("Code", in: document).map { " \($0)" } ?? ""
        let message = XMLFields.value("Message", in: document).map { ": \($0.prefix(300))" } ?? ""
        return "HTTP \(status)\(code)\(message)"
    }
}
