import ChorusAudio
import ChorusConversation
import ChorusSpeech
import ChorusSupport
import Foundation
import Hummingbird

extension ServiceError {
    /// Where an error happened, which decides what an engine error means.
    enum Context: Sendable, Equatable {
        /// Serving a request: an engine error is the service's own failure (500).
        case request
        /// Running a render: an engine error is about the request's audio (422), a provider's about the provider.
        case render
        /// Reading audio a request uploaded in the form field named: an engine error is about that audio (400).
        case upload(field: String)

        var uploadField: String? {
            if case .upload(let field) = self { return field }
            return nil
        }
    }

    /// The one mapping from any error to what a client is told: its status, code, message and `Retry-After`. Messages
    /// name the operation, the message, the voice or the provider, never a key, a credential or a server path.
    ///
    /// | error | answer |
    /// |---|---|
    /// | `ServiceError` | itself |
    /// | the service's own files unwritable (full disk, quota, read-only) | `507 insufficient_storage`, `Retry-After: 60` |
    /// | `StorageError` (shared storage) | unreachable `503 storage_unavailable`; gone `404 not_found`; refused `502 storage_error` |
    /// | `DatabaseError` | unreachable or locked `503 database_unavailable`; else `500 database_error` |
    /// | `SynthesisError` | voice not found `422 unknown_voice`; provider without its key `409 provider_not_configured`; else `502 provider_error` |
    /// | `AudioError` | in a render `422 invalid_audio`; in an upload `400 invalid_audio` (or `unsupported_format`) naming the field; else `500 internal` |
    /// | another layer's `InputError` (`ConversationError`, `TextError`) | in a render `422 invalid` naming the field; else `500 internal` |
    /// | `CancellationError` | in a render (the service stopping) `503 shutting_down`; else `500 internal` |
    /// | Hummingbird's `HTTPResponseError` | its status: `404 not_found` (no such route), `413 too_large`, `405 method_not_allowed`, … |
    /// | anything else | `500 internal` |
    init(_ error: any Error, during context: Context) {
        if let error = error as? ServiceError {
            self = error
        } else if let full = Self.storageFailure(error) {
            self = full
        } else {
            switch error {
            case let error as StorageError: self = Self.sharedStorage(error)
            case let error as DatabaseError: self = Self.database(error)
            case let error as SynthesisError where error.underlying.kind == .voiceNotFound:
                // The voice the request names does not exist: the request's fault, not the provider's.
                self = ServiceError(.unprocessableContent, .unknownVoice, error.description, field: "\(error.field).voice")
            case let error as SynthesisError where error.underlying.kind == .configuration:
                // A provider without its key: the service's setup, documented as 409, not an upstream failure.
                self = ServiceError(.conflict, .providerNotConfigured, error.description, field: "\(error.field).voice")
            case let error as SynthesisError:
                self = ServiceError(.badGateway, .providerError, error.description, field: error.field)
            case let error as AudioError where context == .render:
                let subject = error.subject.hasPrefix("/") ? "a clip" : error.subject
                self = ServiceError(.unprocessableContent, .invalidAudio, "\(subject): \(error.reason)")
            case let error as AudioError where context.uploadField != nil:
                let field = context.uploadField ?? "file"
                let unsupported = error.code == .unsupportedFormat
                self = ServiceError(
                    .badRequest, unsupported ? .unsupportedFormat : .invalidAudio,
                    "\(field): \(unsupported ? "not a supported audio format" : error.reason)", field: field)
            case let error as any InputError where context == .render:
                // A conversation's or a text's field the engine refused only once it ran (a control in a lexicon entry).
                self = ServiceError(.unprocessableContent, .invalid, error.description, field: error.subject)
            case is CancellationError where context == .render:
                self = .shuttingDown
            case let error as any HTTPResponseError:
                self = Self.hummingbird(error)
            default:
                self = ServiceError(
                    .internalServerError, .internal,
                    context == .render ? "the render failed inside the service" : "the request failed inside the service")
            }
        }
    }

    /// What a request that failed with `error` is answered (`init(_:during: .request)`), where a method a known path
    /// does not take is `405` with `Allow` (the routes' methods for `path`), not Hummingbird's `404`.
    static func answering(_ error: any Error, method: HTTPRequest.Method, path: String, routes: RouteTable) -> ServiceError {
        if let error = error as? any HTTPResponseError, error.status == .notFound, !(error is ServiceError) {
            let allowed = routes.methods(for: path)
            if !allowed.isEmpty {
                var notAllowed = ServiceError(
                    .methodNotAllowed, .methodNotAllowed,
                    "\(method.rawValue.prefix(20)) is not allowed here; use \(allowed.joined(separator: ", "))")
                notAllowed.headers[.allow] = allowed.joined(separator: ", ")
                return notAllowed
            }
        }
        return ServiceError(error, during: .request)
    }

    /// A provider's error on a request the service made for a route of its own (a transcription by a remote model, a
    /// voice cloned or deleted), outside a render: what the provider refused as asked `400` naming `field`; a provider
    /// without its key `409 provider_not_configured`; a voice it does not have `404 not_found` naming `missing`; anything
    /// else `502 provider_error`. The message is the provider's error's, which names the provider, never its key.
    static func provider(_ error: VoiceError, field: String? = nil, missing: String? = nil) -> ServiceError {
        switch error.kind {
        case .badRequest where field != nil: return .badRequest(error.description, field: field)
        case .configuration: return ServiceError(.conflict, .providerNotConfigured, error.description, field: field)
        case .voiceNotFound where missing != nil: return .notFound(missing ?? "")
        default: return ServiceError(.badGateway, .providerError, error.description)
        }
    }

    /// Hummingbird's own errors (unknown route, body too large) in the service's error format.
    private static func hummingbird(_ error: any HTTPResponseError) -> ServiceError {
        switch error.status {
        case .notFound: return ServiceError(.notFound, .notFound, "no such route")
        case .contentTooLarge: return ServiceError.tooLarge("the request body is too large")
        case .methodNotAllowed: return ServiceError(.methodNotAllowed, .methodNotAllowed, "this route does not take that method")
        default: return ServiceError(error.status, code: "http_\(error.status.code)", error.status.reasonPhrase)
        }
    }

    /// The shared storage (`--storage`) failing: `503 storage_unavailable` with `Retry-After` when it cannot be
    /// reached or answers with a server error, `502 storage_error` when it refuses (credentials, permissions). The
    /// message names the operation, never the endpoint, a credential or a server path.
    private static func sharedStorage(_ error: StorageError) -> ServiceError {
        switch error.kind {
        case .unavailable:
            return ServiceError(
                .serviceUnavailable, .storageUnavailable, "the shared storage is unavailable (\(error.operation) failed); try again shortly",
                retryAfter: 5)
        case .notFound:
            return ServiceError(.notFound, .notFound, "the shared storage no longer has it (deleted or expired)")
        case .denied, .invalid:
            return ServiceError(.badGateway, .storageError, "the shared storage refused \(error.operation)")
        }
    }

    /// A database failing: `503 database_unavailable` with `Retry-After` when it cannot be reached (or is locked),
    /// `500 database_error` otherwise; the message names the operation only.
    private static func database(_ error: DatabaseError) -> ServiceError {
        switch error.kind {
        case .unavailable:
            return ServiceError(
                .serviceUnavailable, .databaseUnavailable, "the database is unavailable (\(error.operation) failed); try again shortly",
                retryAfter: 5)
        case .failed:
            return ServiceError(.internalServerError, .databaseError, "the database refused \(error.operation)")
        }
    }

    /// `507 insufficient_storage` when `error` is the service failing to write its own files (a full disk, a
    /// quota, a read-only data dir): the server's condition, not the request's, and never a server path.
    /// Stored renders keep being served meanwhile. `nil` for every other error.
    private static func storageFailure(_ error: any Error) -> ServiceError? {
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
        return ServiceError(
            HTTPResponse.Status(code: 507, reasonPhrase: "Insufficient Storage"), .insufficientStorage,
            noSpace
                ? "the service's storage is full; stored renders still play — try again later"
                : "the service cannot write to its storage; stored renders still play — try again later",
            retryAfter: 60)
    }
}
