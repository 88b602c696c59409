import ChorusSupport
import ChorusWire
import Foundation
import Hummingbird
import NIOCore

/// Serves a stored file the way AVPlayer and browsers seek in it: `Accept-Ranges`, a strong `ETag`,
/// `Last-Modified`, long-lived `Cache-Control`; `Range` (`a-b`, `a-`, `-n`) → 206 with `Content-Range`,
/// unsatisfiable → 416, `If-None-Match` → 304, `If-Range` honoured, `HEAD` with headers only.
/// Stored audio is served from memory (`AudioMemoryCache`). `plan` is the one decision of status, headers and bytes, for the
/// router and the audio fast path alike.
struct FileResponder: Sendable {
    let memory = AudioMemoryCache()
    /// `Cache-Control: max-age`, seconds.
    let maxAge: Int
    private let cacheControl: String
    private let modifiedTexts = ModifiedTexts()

    init(maxAge: Int) {
        self.maxAge = maxAge
        cacheControl = "public, max-age=\(maxAge), immutable"
    }

    /// What to answer: the status, the headers, and the bytes of the file to send (`nil`: no body).
    struct Plan {
        var status: HTTPResponse.Status
        var headers: HTTPFields
        var bytes: ClosedRange<Int>?
    }

    /// The answer to a `GET`/`HEAD` with `requestHeaders` for a file of `size` bytes.
    func plan(method: HTTPRequest.Method, requestHeaders: HTTPFields, size: Int, contentType: String, etag: String, modified: Date) -> Plan {
        var headers: HTTPFields = [
            .acceptRanges: "bytes", .eTag: etag, .lastModified: modifiedTexts.text(modified), .contentType: contentType,
            .cacheControl: cacheControl,
        ]
        if let match = requestHeaders[.ifNoneMatch],
            match == "*" || match.split(separator: ",").contains(where: { $0.trimmingCharacters(in: .whitespaces) == etag })
        {
            headers[.contentType] = nil
            return Plan(status: .notModified, headers: headers)
        }
        var range = ByteRange(header: requestHeaders[.range], size: size)
        if let ifRange = requestHeaders[.ifRange], ifRange != etag { range = .whole }
        let status: HTTPResponse.Status
        let bytes: ClosedRange<Int>?
        switch range {
        case .unsatisfiable:
            headers[.contentRange] = "bytes */\(size)"
            headers[.contentType] = nil
            headers[.contentLength] = "0"
            return Plan(status: .rangeNotSatisfiable, headers: headers)
        case .part(let part):
            status = .partialContent
            bytes = part
            headers[.contentRange] = "bytes \(part.lowerBound)-\(part.upperBound)/\(size)"
        case .whole:
            status = .ok
            bytes = size > 0 ? 0...(size - 1) : nil
        }
        headers[.contentLength] = String(bytes.map { $0.count } ?? 0)
        return Plan(status: status, headers: headers, bytes: method == .head ? nil : bytes)
    }

    /// The slice `bytes` of a file held in memory, which must still be `size` bytes long.
    static func slice(_ file: ByteBuffer, _ bytes: ClosedRange<Int>, size: Int) throws -> ByteBuffer {
        guard file.readableBytes == size, let body = file.getSlice(at: file.readerIndex + bytes.lowerBound, length: bytes.count) else {
            throw ServiceError(.internalServerError, .internal, "the stored audio changed size")
        }
        return body
    }

    func respond(
        to request: Request, context: ChorusRequestContext, path: String, size: Int, contentType: String, etag: String,
        modified: Date
    ) async throws -> Response {
        let memory = memory
        return try await respond(to: request, size: size, contentType: contentType, etag: etag, modified: modified, chunkBytes: .max) { bytes in
            try Self.slice(try memory.buffer(path), bytes, size: size)
        }
    }

    /// The same, with the bytes from `read` (the shared storage, for audio this instance does not hold), asked for
    /// `chunkBytes` at a time and sent as they come, so a request holds at most one chunk in memory. The first chunk
    /// is read before the status is sent: an object that is gone is an error answer, not a 200 cut short.
    func respond(
        to request: Request, size: Int, contentType: String, etag: String, modified: Date, chunkBytes: Int = 1_048_576,
        read: @escaping @Sendable (ClosedRange<Int>) async throws -> ByteBuffer
    ) async throws -> Response {
        let plan = plan(method: request.method, requestHeaders: request.headers, size: size, contentType: contentType, etag: etag, modified: modified)
        guard let bytes = plan.bytes else {
            return Response(status: plan.status, headers: plan.headers, body: .init())
        }
        @Sendable func chunk(from start: Int) async throws -> ByteBuffer {
            let part = start...(start + min(chunkBytes, bytes.upperBound - start + 1) - 1)
            let body = try await read(part)
            guard body.readableBytes == part.count else { throw ServiceError(.internalServerError, .internal, "the stored audio changed size") }
            return body
        }
        let first = try await chunk(from: bytes.lowerBound)
        guard first.readableBytes < bytes.count else { return Response(status: plan.status, headers: plan.headers, body: .init(byteBuffer: first)) }
        return Response(
            status: plan.status, headers: plan.headers,
            body: ResponseBody { writer in
                try await writer.write(first)
                var next = bytes.lowerBound + first.readableBytes
                while next <= bytes.upperBound {
                    let part = try await chunk(from: next)
                    try await writer.write(part)
                    next += part.readableBytes
                }
                try await writer.finish(nil)
            })
    }
}

/// `Last-Modified` values by time: the same few stored files are asked for over and over, and formatting a date
/// costs more than the rest of a range request's headers.
final class ModifiedTexts: Sendable {
    private let texts = Locked<[Double: String]>([:])

    func text(_ date: Date) -> String {
        let seconds = date.timeIntervalSince1970
        if let text = texts.withLock({ $0[seconds] }) { return text }
        let text = HTTPSupport.httpDate(date)
        texts.withLock { texts in
            if texts.count >= 4_096 { texts.removeAll(keepingCapacity: true) }
            texts[seconds] = text
        }
        return text
    }
}
