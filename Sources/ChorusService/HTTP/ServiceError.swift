import ChorusAudio
import ChorusSupport
public import ChorusWire
import Foundation
public import Hummingbird

/// An error the service answers with: a status, `{"error": {"code", "message", "field"?}}`, and headers
/// such as `Retry-After`. Messages never contain keys or server paths. Any other error becomes one in one place,
/// `ServiceError(_:during:)`.
public struct ServiceError: HTTPResponseError, CustomStringConvertible {
    public var status: HTTPResponse.Status
    public var body: ErrorBody
    public var headers: HTTPFields

    public init(_ status: HTTPResponse.Status, _ code: ErrorCode, _ message: String, field: String? = nil, retryAfter: Int? = nil) {
        self.init(status, code: code.rawValue, message, field: field, retryAfter: retryAfter)
    }

    /// An error whose code is not one of `ErrorCode`'s: only the server's own HTTP errors (`http_<status>`).
    init(_ status: HTTPResponse.Status, code: String, _ message: String, field: String? = nil, retryAfter: Int? = nil) {
        self.status = status
        body = ErrorBody(code: code, message: message, field: field)
        headers = [:]
        if let retryAfter { headers[.retryAfter] = String(max(1, retryAfter)) }
    }

    public var description: String { "\(status.code) \(body.error.code): \(body.error.message)" }

    public func response(from request: Request, context: some RequestContext) throws -> Response {
        var fields = headers
        fields[.contentType] = "application/json"
        let data = (try? HTTPSupport.encoder.encode(body)) ?? Data(#"{"error":{"code":"internal","message":"error"}}"#.utf8)
        return Response(status: status, headers: fields, body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }

    // MARK: The errors the routes use

    static func badRequest(_ message: String, field: String? = nil) -> ServiceError {
        ServiceError(.badRequest, .invalidRequest, message, field: field)
    }
    static func invalid(_ message: String, field: String? = nil, code: ErrorCode = .invalid) -> ServiceError {
        ServiceError(.unprocessableContent, code, message, field: field)
    }
    /// Runs `body`; an engine error about a request field (a range, a conversation's or lexicon's check) becomes a 422
    /// naming the field (`prefix` + the engine's field name: `output.sample_rate`, `entries.Siobhan.ipa`).
    static func fields<T>(prefix: String = "", _ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let error as any InputError {
            let field = prefix + error.subject
            throw ServiceError.invalid("\(field)\(error.value.map { " \($0)" } ?? ""): \(error.reason)", field: field)
        }
    }
    static func tooLarge(_ message: String, field: String? = nil) -> ServiceError { ServiceError(.contentTooLarge, .tooLarge, message, field: field) }

    /// A refused request body, as the routes answer it.
    init(_ refused: RequestBodyError) {
        switch refused.kind {
        case .invalid: self = .badRequest(refused.message, field: refused.field)
        case .tooLarge: self = .tooLarge(refused.message, field: refused.field)
        }
    }
    static func notFound(_ what: String) -> ServiceError { ServiceError(.notFound, .notFound, "\(what) does not exist or has expired") }
    static let unauthorized = ServiceError(.unauthorized, .unauthorized, "a valid API key is required: send Authorization: Bearer <key>")
    static func overloaded(retryAfter: Int) -> ServiceError {
        ServiceError(.serviceUnavailable, .overloaded, "the render queue is full; try again later", retryAfter: retryAfter)
    }
    static let shuttingDown = ServiceError(.serviceUnavailable, .shuttingDown, "the service is shutting down", retryAfter: 5)
}
