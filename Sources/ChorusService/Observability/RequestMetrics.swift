import ChorusSupport
import ChorusWire
import Foundation
import Prometheus

/// Requests by method, route and status, and their latency by route, straight into the Prometheus
/// registry with the metric objects cached per label set (the generic swift-metrics middleware
/// looked them up on every request and cost a third of a range request's time).
final class RequestMetrics: Sendable {
    private let registry: PrometheusCollectorRegistry
    /// The metric objects made so far, by label set.
    private let made = Locked((counters: [String: Counter](), histograms: [String: DurationHistogram]()))
    private static let buckets: [Duration] = [
        .microseconds(500), .milliseconds(1), .milliseconds(5), .milliseconds(25), .milliseconds(100),
        .milliseconds(250), .seconds(1), .seconds(5), .seconds(15), .seconds(60),
    ]

    init(registry: PrometheusCollectorRegistry) { self.registry = registry }

    func record(method: String, route: String, status: Int, seconds: Double) {
        let counterKey = "\(method) \(route) \(status)"
        let histogramKey = "\(method) \(route)"
        let (counter, histogram) = made.withLock { made in
            let counter =
                made.counters[counterKey]
                ?? {
                    let counter = registry.makeCounter(
                        descriptor: MetricNameDescriptor(
                            metricName: "chorus_http_requests", unitName: "total", helpText: "HTTP requests by method, route and status"),
                        labels: [("method", method), ("route", route), ("status", String(status))])
                    made.counters[counterKey] = counter
                    return counter
                }()
            let histogram =
                made.histograms[histogramKey]
                ?? {
                    let histogram = registry.makeDurationHistogram(
                        descriptor: MetricNameDescriptor(
                            metricName: "chorus_http_request_duration", unitName: "seconds", helpText: "HTTP request latency by route"),
                        labels: [("method", method), ("route", route)], buckets: Self.buckets)
                    made.histograms[histogramKey] = histogram
                    return histogram
                }()
            return (counter, histogram)
        }
        counter.increment()
        histogram.recordNanoseconds(Int64(seconds * 1e9))
    }
}
