import CoreMetrics
import Prometheus

/// swift-prometheus's factory, except that every family it makes carries its `# HELP` text
/// from ``MetricHelp``: swift-metrics' API has no place for a description, and Prometheus
/// requires one family's help to be set when its first series is made.
struct DescribedMetricsFactory: MetricsFactory {
    let registry: PrometheusCollectorRegistry
    let base: PrometheusMetricsFactory
    let durationBuckets: [Duration]

    init(registry: PrometheusCollectorRegistry, durationBuckets: [Duration]) {
        self.registry = registry
        self.base = PrometheusMetricsFactory(registry: registry)
        self.durationBuckets = durationBuckets
    }

    func makeCounter(label: String, dimensions: [(String, String)]) -> any CounterHandler {
        registry.makeCounter(name: label, labels: dimensions, help: MetricHelp.text(for: label))
    }

    func makeFloatingPointCounter(label: String, dimensions: [(String, String)]) -> any FloatingPointCounterHandler {
        registry.makeCounter(name: label, labels: dimensions, help: MetricHelp.text(for: label))
    }

    func makeRecorder(label: String, dimensions: [(String, String)], aggregate: Bool) -> any RecorderHandler {
        guard aggregate else { return registry.makeGauge(name: label, labels: dimensions, help: MetricHelp.text(for: label)) }
        return registry.makeValueHistogram(name: label, labels: dimensions, buckets: Self.valueBuckets, help: MetricHelp.text(for: label))
    }

    func makeMeter(label: String, dimensions: [(String, String)]) -> any MeterHandler {
        registry.makeGauge(name: label, labels: dimensions, help: MetricHelp.text(for: label))
    }

    func makeTimer(label: String, dimensions: [(String, String)]) -> any TimerHandler {
        registry.makeDurationHistogram(name: label, labels: dimensions, buckets: durationBuckets, help: MetricHelp.text(for: label))
    }

    func destroyCounter(_ handler: any CounterHandler) { base.destroyCounter(handler) }
    func destroyFloatingPointCounter(_ handler: any FloatingPointCounterHandler) { base.destroyFloatingPointCounter(handler) }
    func destroyRecorder(_ handler: any RecorderHandler) { base.destroyRecorder(handler) }
    func destroyMeter(_ handler: any MeterHandler) { base.destroyMeter(handler) }
    func destroyTimer(_ handler: any TimerHandler) { base.destroyTimer(handler) }

    private static let valueBuckets: [Double] = [1, 2, 5, 10, 25, 50, 100, 250, 500, 1000]
}
