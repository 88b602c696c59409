import ChorusOutbound
import ChorusSupport
import Crypto
package import Foundation
import NIOCore
import NIOFoundationCompat

extension S3Client {
    /// Uploads a file: in one request up to `partSize`, in parts beyond (multipart upload; an upload that fails
    /// part-way is aborted, so the bucket keeps no orphaned parts and the key keeps its old object, if any).
    package func upload(file: URL, to key: String, contentType: String) async throws {
        let handle: FileHandle
        do { handle = try FileHandle(forReadingFrom: file) } catch {
            throw S3Error(
                kind: .invalid, operation: "upload", key: key, reason: "cannot read \(file.lastPathComponent) (\(error.localizedDescription))")
        }
        defer { try? handle.close() }
        let size = Int((try? handle.seekToEnd()) ?? 0)
        try? handle.seek(toOffset: 0)
        func part() throws -> ByteBuffer {
            guard let data = try handle.read(upToCount: partSize) else { return ByteBuffer() }
            return ByteBuffer(data: data)
        }
        if size <= partSize {
            try await put(key, body: try part(), contentType: contentType)
            return
        }
        let (_, created) = try await send(
            "POST", key: key, query: [("uploads", "")], headers: [("content-type", contentType)],
            operation: "start upload", idempotent: false, expect: [200])
        guard let uploadID = XMLFields.value("UploadId", in: String(buffer: created)) else {
            throw S3Error(kind: .invalid, operation: "start upload", key: key, reason: "the answer has no UploadId")
        }
        do {
            var etags: [String] = []
            var sent = 0
            while sent < size {
                let body = try part()
                guard body.readableBytes > 0 else {
                    throw S3Error(kind: .invalid, operation: "upload", key: key, reason: "\(file.lastPathComponent) shrank while it was read")
                }
                let hash = Hex.string(SHA256.hash(data: body.readableBytesView))
                let (head, _) = try await send(
                    "PUT", key: key, query: [("partNumber", String(etags.count + 1)), ("uploadId", uploadID)], body: body,
                    payloadHash: hash, operation: "upload part \(etags.count + 1)", idempotent: true, expect: [200])
                guard let etag = head.headers.first(name: "etag") else {
                    throw S3Error(kind: .invalid, operation: "upload part \(etags.count + 1)", key: key, reason: "the answer has no ETag")
                }
                etags.append(etag)
                sent += body.readableBytes
            }
            let parts = etags.enumerated().map {
                "<Part><PartNumber>\($0.offset + 1)</PartNumber><ETag>\(XMLFields.escape($0.element))</ETag></Part>"
            }
            let body = ByteBuffer(string: "<CompleteMultipartUpload>\(parts.joined())</CompleteMultipartUpload>")
            let answer: ByteBuffer
            do {
                (_, answer) = try await send(
                    "POST", key: key, query: [("uploadId", uploadID)], body: body,
                    payloadHash: Hex.string(SHA256.hash(data: body.readableBytesView)),
                    operation: "complete upload", idempotent: true, expect: [200])
            } catch let error as S3Error where error.kind == .notFound {
                // A retry after an attempt that completed the upload but whose answer was lost: NoSuchUpload.
                if let object = try? await head(key), object.size == size { return }
                throw error
            }
            // S3 may answer 200 and put the failure in the body.
            let document = String(buffer: answer)
            if document.contains("<Error>") {
                throw S3Error(kind: Self.kind(500), operation: "complete upload", key: key, reason: Self.reason(200, answer))
            }
        } catch {
            _ = try? await send(
                "DELETE", key: key, query: [("uploadId", uploadID)], operation: "abort upload", idempotent: true, expect: [200, 204, 404])
            throw error
        }
    }
}
