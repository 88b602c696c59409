import Foundation
import Hummingbird
import NIOCore

/// Serves a stored file the way AVPlayer and browsers seek in it: `Accept-Ranges`, a strong `ETag`,
/// `Last-Modified`, long-lived `Cache-Control`; `Range` (`a-b`, `a-`, `-n`) → 206 with `Content-Range`,
/// unsatisfiable → 416, `If-None-Match` → 304, `If-Range` honoured, `HEAD` with headers only.
/// Stored audio is served from memory (`MappedFiles`); other files are read by Hummingbird's `FileIO`.
struct FileResponder: Sendable {
    let fileIO: FileIO
    let mapped = MappedFiles()
    /// `Cache-Control: max-age`, seconds.
    let maxAge: Int

    func respond(to request: Request, context: ChorusRequestContext, path: String, size: Int, contentType: String, etag: String,
                 modified: Date) async throws -> Response {
        try await respond(to: request, size: size, contentType: contentType, etag: etag, modified: modified) { bytes in
            let file = try mapped.buffer(path)
            guard file.readableBytes == size, let body = file.getSlice(at: file.readerIndex + bytes.lowerBound, length: bytes.count) else {
                throw ServiceError(.internalServerError, "internal", "the stored audio changed size")
            }
            return body
        }
    }

    /// The same, with the bytes from `read` (the shared storage, for audio this instance does not hold).
    func respond(to request: Request, size: Int, contentType: String, etag: String, modified: Date,
                 read: (ClosedRange<Int>) async throws -> ByteBuffer) async throws -> Response {
        var headers: HTTPFields = [
            .acceptRanges: "bytes", .eTag: etag, .lastModified: HTTPSupport.httpDate(modified), .contentType: contentType,
            .cacheControl: "public, max-age=\(maxAge), immutable",
        ]
        if let match = request.headers[.ifNoneMatch], match == "*" || match.split(separator: ",").contains(where: { $0.trimmingCharacters(in: .whitespaces) == etag }) {
            headers[.contentType] = nil
            return Response(status: .notModified, headers: headers)
        }
        var range = ByteRange(header: request.headers[.range], size: size)
        if let ifRange = request.headers[.ifRange], ifRange != etag { range = .whole }
        let status: HTTPResponse.Status
        let bytes: ClosedRange<Int>?
        switch range {
        case .unsatisfiable:
            headers[.contentRange] = "bytes */\(size)"
            headers[.contentType] = nil
            return Response(status: .rangeNotSatisfiable, headers: headers, body: .init())
        case .part(let part):
            status = .partialContent
            bytes = part
            headers[.contentRange] = "bytes \(part.lowerBound)-\(part.upperBound)/\(size)"
        case .whole:
            status = .ok
            bytes = size > 0 ? 0...(size - 1) : nil
        }
        headers[.contentLength] = String(bytes.map { $0.count } ?? 0)
        if request.method == .head || bytes == nil {
            return Response(status: status, headers: headers, body: .init())
        }
        let body = try await read(bytes!)
        guard body.readableBytes == bytes!.count else { throw ServiceError(.internalServerError, "internal", "the stored audio changed size") }
        return Response(status: status, headers: headers, body: .init(byteBuffer: body))
    }
}
