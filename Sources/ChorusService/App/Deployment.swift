/// How this instance shares its work, decided once from the configuration.
///
/// - `single`: alone. The embedded state (`chorus.sqlite`) keeps the renders accepted and not finished, and the
///   request limits' buckets (`LocalRateLimits`) across restarts; the limits are counted here.
/// - `shared`: one of several instances on one PostgreSQL (`--database`, with `--storage` for the files). The render
///   index, the queue of renders and the request limits are the database's.
enum Deployment: Sendable {
    case single(LocalRateLimits)
    case shared(Shared)

    /// What several instances share.
    struct Shared: Sendable {
        /// The connection pool.
        let database: PostgresDatabase
        /// The renders queued, running and finished on every instance.
        let queue: SharedQueue
        /// What this instance hears of the queue (its notifications).
        let watcher: QueueWatcher
        /// The per-key request limit, counted in the database.
        let rateLimits: SharedRateLimits
    }

    /// The shared parts, when there are several instances.
    var shared: Shared? {
        guard case .shared(let shared) = self else { return nil }
        return shared
    }

    /// The request limits' keeper, when this instance is alone.
    var localRateLimits: LocalRateLimits? {
        guard case .single(let limits) = self else { return nil }
        return limits
    }
}
