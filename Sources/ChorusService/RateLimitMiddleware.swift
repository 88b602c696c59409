import Hummingbird

/// 429 with `Retry-After` once a caller has used its requests for the minute.
struct RateLimitMiddleware: RouterMiddleware {
    typealias Context = ChorusRequestContext
    let limiter: RateLimiter

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        if limiter.perMinute > 0, let caller = context.caller, let wait = limiter.take(for: caller.id) {
            throw ServiceError(.tooManyRequests, "rate_limited", "too many requests for this key; try again in \(wait) s", retryAfter: wait)
        }
        return try await next(request, context)
    }
}
