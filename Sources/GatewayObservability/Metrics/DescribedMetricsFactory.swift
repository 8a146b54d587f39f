import CoreMetrics
import Prometheus

/// swift-prometheus's factory, except that every family it makes carries its `# HELP` text
/// from ``MetricHelp``: swift-metrics' API has no place for a description, and Prometheus
/// requires one family's help to be set when its first series is made.
package struct DescribedMetricsFactory: MetricsFactory {
    package let registry: PrometheusCollectorRegistry
    package let base: PrometheusMetricsFactory
    package let durationBuckets: [Duration]

    package init(registry: PrometheusCollectorRegistry, durationBuckets: [Duration]) {
        self.registry = registry
        self.base = PrometheusMetricsFactory(registry: registry)
        self.durationBuckets = durationBuckets
    }

    package func makeCounter(label: String, dimensions: [(String, String)]) -> any CounterHandler {
        registry.makeCounter(name: label, labels: dimensions, help: MetricHelp.text(for: label))
    }

    package func makeFloatingPointCounter(label: String, dimensions: [(String, String)]) -> any FloatingPointCounterHandler {
        registry.makeCounter(name: label, labels: dimensions, help: MetricHelp.text(for: label))
    }

    package func makeRecorder(label: String, dimensions: [(String, String)], aggregate: Bool) -> any RecorderHandler {
        guard aggregate else { return registry.makeGauge(name: label, labels: dimensions, help: MetricHelp.text(for: label)) }
        return registry.makeValueHistogram(name: label, labels: dimensions, buckets: Self.valueBuckets, help: MetricHelp.text(for: label))
    }

    package func makeMeter(label: String, dimensions: [(String, String)]) -> any MeterHandler {
        registry.makeGauge(name: label, labels: dimensions, help: MetricHelp.text(for: label))
    }

    package func makeTimer(label: String, dimensions: [(String, String)]) -> any TimerHandler {
        registry.makeDurationHistogram(name: label, labels: dimensions, buckets: durationBuckets, help: MetricHelp.text(for: label))
    }

    package func destroyCounter(_ handler: any CounterHandler) { base.destroyCounter(handler) }
    package func destroyFloatingPointCounter(_ handler: any FloatingPointCounterHandler) { base.destroyFloatingPointCounter(handler) }
    package func destroyRecorder(_ handler: any RecorderHandler) { base.destroyRecorder(handler) }
    package func destroyMeter(_ handler: any MeterHandler) { base.destroyMeter(handler) }
    package func destroyTimer(_ handler: any TimerHandler) { base.destroyTimer(handler) }

    private static let valueBuckets: [Double] = [1, 2, 5, 10, 25, 50, 100, 250, 500, 1000]
}
