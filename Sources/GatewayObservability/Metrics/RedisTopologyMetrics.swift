import Metrics
import Synchronization

/// Which Redis the gateway writes to and how often that changed:
/// `gateway_redis_primary{address, topology}` is 1 for each current primary (0 for earlier
/// ones), `gateway_redis_failovers_total` counts the moves to a new primary.
package enum RedisTopologyMetrics {
    private static let current = Mutex<[String: Metrics.Gauge]>([:])

    /// The primary is now `address` (`host:port`); `topology`: standalone or sentinel.
    package static func primary(_ address: String, topology: String, isFailover: Bool) {
        primaries([address], topology: topology, isFailover: isFailover)
    }

    /// The primaries are now `addresses` (every primary of a cluster, or the one primary).
    package static func primaries(_ addresses: [String], topology: String, isFailover: Bool) {
        let gauges = Dictionary(uniqueKeysWithValues: Set(addresses).map { address in
            (address, Metrics.Gauge(label: "gateway_redis_primary", dimensions: [("address", address), ("topology", topology)]))
        })
        let previous = current.withLock { current in
            defer { current = gauges }
            return current
        }
        for (address, gauge) in previous where gauges[address] == nil { gauge.record(0) }
        for gauge in gauges.values { gauge.record(1) }
        if isFailover {
            GatewayMetrics.counter("gateway_redis_failovers_total").increment()
        }
    }
}
