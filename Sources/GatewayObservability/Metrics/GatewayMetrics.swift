import Metrics
import Prometheus
import Synchronization

/// The process's metrics: swift-metrics in the code, exported in Prometheus text format by the
/// admin listener's `GET /metrics`.
package enum GatewayMetrics {
    package static let registry = PrometheusCollectorRegistry()

    /// Latency buckets from 250 µs: a gateway's own work is sub-millisecond, so the default
    /// buckets (starting at 5 ms) would put every request in the first one.
    package static let latencyBuckets: [Duration] = [
        .microseconds(250), .microseconds(500), .milliseconds(1), .milliseconds(2), .milliseconds(5),
        .milliseconds(10), .milliseconds(25), .milliseconds(50), .milliseconds(100), .milliseconds(250),
        .milliseconds(500), .seconds(1), .milliseconds(2500), .seconds(5), .seconds(10),
    ]

    private static let bootstrapOnce: Void = {
        MetricsSystem.bootstrap(DescribedMetricsFactory(registry: registry, durationBuckets: latencyBuckets))
        // Made now, at zero, so that dashboards and alert rules find them before the first event.
        CacheMetrics.exportAll()
        _ = [ConfigReloadMetrics.applied, ConfigReloadMetrics.invalid]
        for family in unlabelledCounters { _ = counter(family) }
        _ = ProcessMetrics.shared
    }()

    /// Installs the Prometheus backend once per process (tests build many apps in one process).
    package static func bootstrap() {
        _ = bootstrapOnce
    }

    /// Counters without labels that only grow on rare events; the other unlabelled families
    /// are made when the pieces they measure start.
    private static let unlabelledCounters = [
        "gateway_otp_delivery_failures_total", "gateway_refresh_token_reuse_total", "gateway_redis_failovers_total",
    ]

    /// The exposition text, with the process figures read at this moment, and every family
    /// that has no series yet described by its HELP and TYPE lines.
    package static func prometheusText() -> [UInt8] {
        ProcessMetrics.shared.update()
        var text = registry.emitToBuffer()
        text += MetricFamilyType.headersOfFamiliesMissing(from: text)
        return text
    }

    /// The counter `label` with `dimensions`, made on first use and reused after: asking the
    /// metrics factory for a handle on every request costs more than a cached key check.
    /// Only call it while handling requests, after ``bootstrap()``.
    package static func counter(_ label: String, _ dimensions: [(String, String)] = []) -> Metrics.Counter {
        let key = CounterKey(label: label, dimensions: dimensions.map { [$0.0, $0.1] })
        if let counter = counters.withLock({ $0[key] }) { return counter }
        let counter = Metrics.Counter(label: label, dimensions: dimensions)
        counters.withLock { $0[key] = counter }
        return counter
    }

    /// The timer `label` with `dimensions`, cached like ``counter(_:_:)``.
    package static func timer(_ label: String, _ dimensions: [(String, String)] = []) -> Metrics.Timer {
        let key = CounterKey(label: label, dimensions: dimensions.map { [$0.0, $0.1] })
        if let timer = timers.withLock({ $0[key] }) { return timer }
        let timer = Metrics.Timer(label: label, dimensions: dimensions)
        timers.withLock { $0[key] = timer }
        return timer
    }

    private struct CounterKey: Hashable {
        package let label: String
        package let dimensions: [[String]]
    }

    private static let counters = Mutex([CounterKey: Metrics.Counter]())
    private static let timers = Mutex([CounterKey: Metrics.Timer]())
}
