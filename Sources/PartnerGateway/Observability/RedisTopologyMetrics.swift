import Metrics
import Synchronization

/// Which Redis the gateway writes to and how often that changed:
/// `gateway_redis_primary{address, topology}` is 1 for the current primary (0 for earlier
/// ones), `gateway_redis_failovers_total` counts the moves to a new primary.
enum RedisTopologyMetrics {
    private static let current = Mutex<Metrics.Gauge?>(nil)

    /// The primary is now `address` (`host:port`); `topology`: standalone or sentinel.
    static func primary(_ address: String, topology: String, isFailover: Bool) {
        let gauge = Metrics.Gauge(label: "gateway_redis_primary", dimensions: [("address", address), ("topology", topology)])
        let previous = current.withLock { current in
            defer { current = gauge }
            return current
        }
        previous?.record(0)
        gauge.record(1)
        if isFailover {
            GatewayMetrics.counter("gateway_redis_failovers_total").increment()
        }
    }
}
