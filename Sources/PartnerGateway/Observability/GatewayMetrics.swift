import Metrics
import Prometheus

/// The process's metrics: swift-metrics in the code, exported in Prometheus text format by the
/// admin listener's `GET /metrics`.
enum GatewayMetrics {
    static let registry = PrometheusCollectorRegistry()

    /// Latency buckets from 250 µs: a gateway's own work is sub-millisecond, so the default
    /// buckets (starting at 5 ms) would put every request in the first one.
    static let latencyBuckets: [Duration] = [
        .microseconds(250), .microseconds(500), .milliseconds(1), .milliseconds(2), .milliseconds(5),
        .milliseconds(10), .milliseconds(25), .milliseconds(50), .milliseconds(100), .milliseconds(250),
        .milliseconds(500), .seconds(1), .milliseconds(2500), .seconds(5), .seconds(10),
    ]

    private static let bootstrapOnce: Void = {
        var factory = PrometheusMetricsFactory(registry: registry)
        factory.defaultDurationHistogramBuckets = latencyBuckets
        MetricsSystem.bootstrap(factory)
    }()

    /// Installs the Prometheus backend once per process (tests build many apps in one process).
    static func bootstrap() {
        _ = bootstrapOnce
    }

    static func prometheusText() -> [UInt8] {
        registry.emitToBuffer()
    }
}
