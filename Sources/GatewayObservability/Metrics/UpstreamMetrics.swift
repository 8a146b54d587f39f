import Metrics

/// What an operator watches per route: how long upstreams take to answer, what they
/// answer, and how forwarding fails. One per route, made when the routes are compiled, so
/// the hot path touches handles it already has instead of asking the metrics factory.
package final class UpstreamMetrics: Sendable {
    private let route: String
    private let latency: Metrics.Timer
    /// `gateway_upstream_responses_total` by route and status, one table for every route (each
    /// table holds a thread-specific key, of which a process has a limited number).
    private static let responses = MetricHandleTable<ResponseLabels, Metrics.Counter> { labels in
        Metrics.Counter(label: "gateway_upstream_responses_total", dimensions: [("route", labels.route), ("status", String(labels.status))])
    }

    private struct ResponseLabels: Hashable, Sendable {
        package let route: String
        package let status: Int
    }

    package init(route: String) {
        self.route = route
        latency = Metrics.Timer(label: "gateway_upstream_duration_seconds", dimensions: [("route", route)])
    }

    /// The upstream answered `status`, `duration` after the request was sent.
    package func answered(status: Int, after duration: Duration) {
        latency.record(duration: duration)
        Self.responses.handle(for: ResponseLabels(route: route, status: status)).increment()
    }

    /// `kind`: refused, reset, timeout, malformed (``UpstreamError``), or body_too_large.
    package func failed(_ kind: String) {
        GatewayMetrics.counter("gateway_upstream_errors_total", [("route", route), ("kind", kind)]).increment()
    }
}
