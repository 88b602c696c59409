import ChorusConversation
import ChorusOutbound
import ChorusSupport
import ChorusWire
import Foundation
import Hummingbird
import NIOCore

/// Small pieces every route uses: bounded bodies, JSON in and out, query values.
package enum HTTPSupport {
    static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }()

    /// The request body, at most `limit` bytes (413 `too_large` otherwise, before reading when Content-Length says so).
    /// A `multipart/form-data` request's body (at most `limit` bytes) and its boundary.
    /// - Throws: `ServiceError` 400 (`body`) when the request is not multipart/form-data; 413 over the limit.
    static func multipartBody(of request: Request, limit: Int) async throws -> (body: Data, boundary: String) {
        let boundary: String
        do {
            boundary = try MultipartForm.boundary(of: request.headers[.contentType] ?? "")
        } catch let error as MultipartError {
            throw ServiceError.badRequest(error.description, field: "body")
        }
        return (try await body(of: request, limit: limit), boundary)
    }

    static func body(of request: Request, limit: Int) async throws -> Data {
        if let declared = request.headers[.contentLength].flatMap(Int.init), declared > limit {
            throw ServiceError.tooLarge("the body is \(declared) bytes; the limit is \(limit)")
        }
        do {
            var buffer = try await request.body.collect(upTo: limit)
            return buffer.readData(length: buffer.readableBytes) ?? Data()
        } catch is NIOTooManyBytesError {
            throw ServiceError.tooLarge("the body is larger than the limit of \(limit) bytes")
        }
    }

    /// Decodes a JSON body (`WireDecoding.decode`), naming the field that is wrong.
    /// - Throws: `ServiceError` 400 `invalid_request`, 413 `too_large`.
    static func decode<T: Decodable>(_ type: T.Type, from data: Data, budget: JSONBudget = JSONBudget()) throws -> T {
        do {
            return try WireDecoding.decode(type, from: data, budget: budget)
        } catch let error as RequestBodyError {
            throw ServiceError(error)
        }
    }

    static func json<T: Encodable>(_ value: T, status: HTTPResponse.Status = .ok, headers: HTTPFields = [:]) throws -> Response {
        var fields = headers
        fields[.contentType] = "application/json"
        return Response(status: status, headers: fields, body: .init(byteBuffer: ByteBuffer(bytes: try encoder.encode(value))))
    }

    static func bytes(_ data: Data, contentType: String, status: HTTPResponse.Status = .ok, headers: HTTPFields = [:]) -> Response {
        var fields = headers
        fields[.contentType] = contentType
        fields[.contentLength] = String(data.count)
        return Response(status: status, headers: fields, body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }

    /// A query value.
    static func query(_ request: Request, _ name: String) -> String? {
        request.uri.queryParameters[name[...]].map(String.init)
    }

    /// An integer query value (400 naming it when it is not one).
    static func integer(_ request: Request, _ name: String) throws -> Int? {
        guard let text = query(request, name) else { return nil }
        guard let value = Int(text) else { throw ServiceError.badRequest("\(name): \"\(text.prefix(20))\" is not an integer", field: name) }
        return value
    }

    /// `true`, `1` or `yes` (case-insensitive).
    /// A boolean query parameter: `true`/`1`/`yes` or `false`/`0`/`no`; absent is false.
    /// - Throws: 400 naming the parameter for any other value.
    static func flag(_ request: Request, _ name: String) throws -> Bool {
        guard let text = query(request, name)?.lowercased() else { return false }
        if ["true", "1", "yes"].contains(text) { return true }
        if ["false", "0", "no"].contains(text) { return false }
        throw ServiceError.badRequest("\(name): \"\(text.prefix(20))\" is not true or false", field: name)
    }

    /// An HTTP date (`Last-Modified`).
    static func httpDate(_ date: Date) -> String { DateText.http(date.timeIntervalSince1970) }
}
