/// Every `code` the service answers with (`ErrorBody.Detail.code`, also a failed render's in its manifest), written
/// once: the service makes its errors from these, and docs/service.md's table lists exactly these (a test holds the
/// two together). Besides them, an HTTP error of the server itself that none of these names is `http_<status>`.
public enum ErrorCode: String, Sendable, CaseIterable {
    /// 400: bad JSON, query or multipart form.
    case invalidRequest = "invalid_request"
    /// 400 or 422: audio that does not decode, or has none.
    case invalidAudio = "invalid_audio"
    /// 400: an upload to transcribe in a format Chorus does not read.
    case unsupportedFormat = "unsupported_format"
    /// 401: no or wrong key; a bad player signature.
    case unauthorized
    /// 404: no such render, clip, lexicon, voice or route.
    case notFound = "not_found"
    /// 404: a file of a render that failed.
    case renderFailed = "render_failed"
    /// 405: a known path, another method.
    case methodNotAllowed = "method_not_allowed"
    /// 409: a render still being made.
    case notReady = "not_ready"
    /// 409: a provider whose key is not set.
    case providerNotConfigured = "provider_not_configured"
    /// 409: a key's lexicons at their limit.
    case tooManyLexicons = "too_many_lexicons"
    /// 413: a body, messages or text over the limits.
    case tooLarge = "too_large"
    /// 415: not audio that FFmpeg recognises.
    case unsupportedMedia = "unsupported_media"
    /// 422: a setting out of its range, or a request that does not hold together.
    case invalid
    /// 422: a message naming a server path.
    case pathNotAllowed = "path_not_allowed"
    /// 422: an unknown clip id.
    case clipNotFound = "clip_not_found"
    /// 422: a clip over the length limit.
    case clipTooLong = "clip_too_long"
    /// 422: clips for a voice clone too short or too long together.
    case clipLength = "clip_length"
    /// 422: a voice its provider does not have.
    case unknownVoice = "unknown_voice"
    /// 422: a provider Chorus does not have.
    case unknownProvider = "unknown_provider"
    /// 422: a stored lexicon that does not exist.
    case unknownLexicon = "unknown_lexicon"
    /// 429: over the key's request rate.
    case rateLimited = "rate_limited"
    /// 429: over the key's renders queued or running.
    case tooManyRenders = "too_many_renders"
    /// 500: a fault of the service itself.
    case `internal`
    /// 500: a render that the service stopped before it finished (its manifest).
    case interrupted
    /// 500: the shared database refused an operation.
    case databaseError = "database_error"
    /// 502: a provider failed for good.
    case providerError = "provider_error"
    /// 502: the shared storage refused an operation.
    case storageError = "storage_error"
    /// 503: a queue is full.
    case overloaded
    /// 503: the service is stopping.
    case shuttingDown = "shutting_down"
    /// 503: no transcription model, or a broken one.
    case transcriptionUnavailable = "transcription_unavailable"
    /// 503: the shared storage cannot be reached.
    case storageUnavailable = "storage_unavailable"
    /// 503: the database cannot be reached or stays locked.
    case databaseUnavailable = "database_unavailable"
    /// 507: the disk is full or read-only.
    case insufficientStorage = "insufficient_storage"
}
