import Metrics
import Synchronization

/// What an operator watches per route: how long upstreams take to answer, what they
/// answer, and how forwarding fails. One per route, made when the routes are compiled, so
/// the hot path touches handles it already has instead of asking the metrics factory.
final class UpstreamMetrics: Sendable {
    private let route: String
    private let latency: Metrics.Timer
    private let responses = Mutex([Int: Metrics.Counter]())

    init(route: String) {
        self.route = route
        latency = Metrics.Timer(label: "gateway_upstream_duration_seconds", dimensions: [("route", route)])
    }

    /// The upstream answered `status`, `duration` after the request was sent.
    func answered(status: Int, after duration: Duration) {
        latency.record(duration: duration)
        counter(status).increment()
    }

    /// `kind`: refused, reset, timeout, malformed (``UpstreamError``), or body_too_large.
    func failed(_ kind: String) {
        GatewayMetrics.counter("gateway_upstream_errors_total", [("route", route), ("kind", kind)]).increment()
    }

    private func counter(_ status: Int) -> Metrics.Counter {
        if let counter = responses.withLock({ $0[status] }) { return counter }
        let counter = Metrics.Counter(label: "gateway_upstream_responses_total", dimensions: [("route", route), ("status", String(status))])
        responses.withLock { $0[status] = counter }
        return counter
    }
}
