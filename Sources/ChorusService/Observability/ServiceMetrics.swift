import Foundation
import Metrics
import Prometheus

/// The service's metrics: per-route request counts and latencies (`RequestMetrics`), renders by outcome,
/// render seconds, queue depth, and the engine's provider requests, retries and cache hits by provider.
/// One Prometheus registry per process (swift-metrics can be bootstrapped only once); `/metrics` prints it.
struct ServiceMetrics: Sendable {
    static let registry: PrometheusCollectorRegistry = {
        let registry = PrometheusCollectorRegistry()
        var factory = PrometheusMetricsFactory(registry: registry)
        factory.defaultDurationHistogramBuckets = [
            .milliseconds(5), .milliseconds(25), .milliseconds(100), .milliseconds(250),
            .milliseconds(500), .seconds(1), .seconds(2.5), .seconds(5), .seconds(10), .seconds(30),
        ]
        MetricsSystem.bootstrap(factory)
        return registry
    }()

    /// Per-route request counts and latencies.
    let requests = RequestMetrics(registry: ServiceMetrics.registry)

    init() {}

    func rendered(outcome: String, seconds: Double) {
        Counter(label: "chorus_renders_total", dimensions: [("outcome", outcome)]).increment()
        Timer(label: "chorus_render_seconds").recordNanoseconds(Int64(seconds * 1e9))
    }

    /// A shared job claimed (`--database`): seconds from queued to claimed.
    func claimed(waited: Double) {
        Timer(label: "chorus_render_claim_wait_seconds").recordNanoseconds(Int64(max(0, waited) * 1e9))
    }

    func queue(depth: Int) {
        Gauge(label: "chorus_render_queue_depth").record(depth)
    }

    /// Prometheus text format.
    func text() -> String { Self.registry.emitToString() }
}
