import ChorusAudio
public import ChorusWire
import Foundation
public import Hummingbird

/// An error the service answers with: a status, `{"error": {"code", "message", "field"?}}`, and headers
/// such as `Retry-After`. Messages never contain keys or server paths.
public struct ServiceError: HTTPResponseError, CustomStringConvertible {
    public var status: HTTPResponse.Status
    public var body: ErrorBody
    public var headers: HTTPFields

    public init(_ status: HTTPResponse.Status, _ code: String, _ message: String, field: String? = nil, retryAfter: Int? = nil) {
        self.status = status
        body = ErrorBody(code: code, message: message, field: field)
        headers = [:]
        if let retryAfter { headers[.retryAfter] = String(max(1, retryAfter)) }
    }

    public var description: String { "\(status.code) \(body.error.code): \(body.error.message)" }

    public func response(from request: Request, context: some RequestContext) throws -> Response {
        var fields = headers
        fields[.contentType] = "application/json"
        let data = (try? Self.encoder.encode(body)) ?? Data(#"{"error":{"code":"internal","message":"error"}}"#.utf8)
        return Response(status: status, headers: fields, body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }

    static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }()

    // MARK: The errors the routes use

    static func badRequest(_ message: String, field: String? = nil) -> ServiceError { ServiceError(.badRequest, "invalid_request", message, field: field) }
    static func invalid(_ message: String, field: String? = nil, code: String = "invalid") -> ServiceError {
        ServiceError(.unprocessableContent, code, message, field: field)
    }
    static func tooLarge(_ message: String, field: String? = nil) -> ServiceError { ServiceError(.contentTooLarge, "too_large", message, field: field) }

    /// A refused request body, as the routes answer it.
    init(_ refused: RequestBodyError) {
        switch refused.kind {
        case .invalid: self = .badRequest(refused.message, field: refused.field)
        case .tooLarge: self = .tooLarge(refused.message, field: refused.field)
        }
    }
    static func notFound(_ what: String) -> ServiceError { ServiceError(.notFound, "not_found", "\(what) does not exist or has expired") }
    static let unauthorized = ServiceError(.unauthorized, "unauthorized", "a valid API key is required: send Authorization: Bearer <key>")
    static func overloaded(retryAfter: Int) -> ServiceError {
        ServiceError(.serviceUnavailable, "overloaded", "the render queue is full; try again later", retryAfter: retryAfter)
    }
    static let shuttingDown = ServiceError(.serviceUnavailable, "shutting_down", "the service is shutting down", retryAfter: 5)

    /// The shared storage (`--storage`) failing: `503 storage_unavailable` with `Retry-After` when it cannot be
    /// reached or answers with a server error, `502 storage_error` when it refuses (credentials, permissions). The
    /// message names the operation, never the endpoint, a credential or a server path.
    static func sharedStorage(_ error: StorageError) -> ServiceError {
        switch error.kind {
        case .unavailable:
            return ServiceError(.serviceUnavailable, "storage_unavailable", "the shared storage is unavailable (\(error.operation) failed); try again shortly",
                                retryAfter: 5)
        case .notFound:
            return ServiceError(.notFound, "not_found", "the shared storage no longer has it (deleted or expired)")
        case .denied, .invalid:
            return ServiceError(.badGateway, "storage_error", "the shared storage refused \(error.operation)")
        }
    }

    /// `507 insufficient_storage` when `error` is the service failing to write its own files (a full disk, a
    /// quota, a read-only data dir): the server's condition, not the request's, and never a server path.
    /// Stored renders keep being served meanwhile. `nil` for every other error.
    static func storageFailure(_ error: any Error) -> ServiceError? {
        let noSpace: Bool
        switch error {
        case let error as ChorusAudio.AudioError where error.code == .writeFailed:
            noSpace = [error.underlying, error.reason].contains { $0?.localizedCaseInsensitiveContains("space") == true }
        case let error as CocoaError where error.code == .fileWriteOutOfSpace:
            noSpace = true
        case let error as CocoaError where [.fileWriteUnknown, .fileWriteNoPermission, .fileWriteVolumeReadOnly].contains(error.code):
            noSpace = false
        case let error as POSIXError where [.ENOSPC, .EDQUOT, .EROFS, .EIO].contains(error.code):
            noSpace = error.code == .ENOSPC || error.code == .EDQUOT
        default:
            return nil
        }
        return ServiceError(HTTPResponse.Status(code: 507, reasonPhrase: "Insufficient Storage"), "insufficient_storage",
                            noSpace ? "the service's storage is full; stored renders still play — try again later"
                                    : "the service cannot write to its storage; stored renders still play — try again later",
                            retryAfter: 60)
    }
}

/// A shared-storage failure that reaches a route answers as `ServiceError.sharedStorage` says.
extension StorageError: HTTPResponseError {
    var status: HTTPResponse.Status { ServiceError.sharedStorage(self).status }

    func response(from request: Request, context: some RequestContext) throws -> Response {
        try ServiceError.sharedStorage(self).response(from: request, context: context)
    }
}
