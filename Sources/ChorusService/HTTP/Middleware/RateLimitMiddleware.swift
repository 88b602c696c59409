import Hummingbird

/// 429 with `Retry-After` once a caller has used its requests for the minute: counted in the database when there is
/// one (`--database`: the limit holds across instances), else by this instance. A database that cannot be reached
/// does not stop requests that do not need it (finished renders keep playing): the request goes on uncounted.
struct RateLimitMiddleware: RouterMiddleware {
    typealias Context = ChorusRequestContext
    let limiter: RateLimiter
    let shared: SharedRateLimits?

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        if limiter.perMinute > 0, let caller = context.caller {
            let wait: Int?
            if let shared {
                wait = try? await shared.take(for: caller.id)
            } else {
                wait = limiter.take(for: caller.id)
            }
            if let wait {
                throw ServiceError(.tooManyRequests, .rateLimited, "too many requests for this key; try again in \(wait) s", retryAfter: wait)
            }
        }
        return try await next(request, context)
    }
}
