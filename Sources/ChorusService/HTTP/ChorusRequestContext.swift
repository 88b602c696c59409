public import Hummingbird

/// Per-request state: Hummingbird's core context, the request id and who is calling.
public struct ChorusRequestContext: RequestContext {
    public var coreContext: CoreRequestContextStorage
    /// Returned as `X-Request-Id` and in every log line of the request.
    public var requestID = ""
    /// Who is calling (set by `AuthenticationMiddleware` on `/v1` routes).
    public var caller: Caller?

    public init(source: Source) {
        coreContext = .init(source: source)
    }

    /// Bodies are bounded per route (`ServiceConfiguration.maxBodyBytes`), not here.
    public var maxUploadSize: Int { Int.max }
}

/// An authenticated client: a short id derived from its key (never the key itself), or `anonymous`
/// when the service runs without keys.
public struct Caller: Sendable, Hashable {
    public var id: String
}
