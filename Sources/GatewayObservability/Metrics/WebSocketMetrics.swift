import Metrics

/// One route's WebSocket metrics: connections open now, handshakes refused and closes by
/// reason (docs/operations.md).
package final class WebSocketMetrics: Sendable {
    private let route: String
    private let open: Meter

    package init(route: String) {
        self.route = route
        open = Meter(label: "gateway_websocket_connections", dimensions: [("route", route)])
    }

    package func opened() {
        open.increment()
    }

    /// `reason`: client, upstream (a side closed), revoked, expired, idle, shutdown.
    package func closed(reason: String) {
        open.decrement()
        Counter(label: "gateway_websocket_closes_total", dimensions: [("route", route), ("reason", reason)]).increment()
    }

    /// A WebSocket handshake answered `status` instead of `101`.
    package func refused(status: Int) {
        Counter(label: "gateway_websocket_upgrades_refused_total", dimensions: [("route", route), ("status", String(status))]).increment()
    }
}
