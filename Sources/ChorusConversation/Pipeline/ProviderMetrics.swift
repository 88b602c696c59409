import Metrics

/// Provider traffic as swift-metrics counters, labelled by provider. Nothing is recorded unless the
/// process bootstraps a metrics backend (the service does; the CLI does not).
enum ProviderMetrics {
    static func request(_ provider: String) { Counter(label: "chorus_provider_requests_total", dimensions: [("provider", provider)]).increment() }
    static func retry(_ provider: String) { Counter(label: "chorus_provider_retries_total", dimensions: [("provider", provider)]).increment() }
    static func cacheHit(_ provider: String) { Counter(label: "chorus_cache_hits_total", dimensions: [("provider", provider)]).increment() }
}
