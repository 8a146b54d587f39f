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

    /// `kind`: refused, reset, timeout, malformed (``UpstreamError``), no_target, or body_too_large.
    package func failed(_ kind: String) {
        GatewayMetrics.counter("gateway_upstream_errors_total", [("route", route), ("kind", kind)]).increment()
    }

    /// `gateway_upstream_target_requests_total` of `target`: made once per target when the
    /// routes are compiled, so counting a try is one increment.
    package func targetRequests(target: String) -> Counter {
        Counter(label: "gateway_upstream_target_requests_total", dimensions: [("route", route), ("target", target)])
    }

    /// A request is tried again (on another target, when the route has several).
    package func retried() {
        GatewayMetrics.counter("gateway_upstream_retries_total", [("route", route), ("result", "tried")]).increment()
    }

    /// A retry the rule allowed was not made: the route's retry budget was spent.
    package func retryRefused() {
        GatewayMetrics.counter("gateway_upstream_retries_total", [("route", route), ("result", "over_budget")]).increment()
    }

    /// Passive outlier ejection took `target` out.
    package func ejected(target: String) {
        GatewayMetrics.counter("gateway_upstream_ejections_total", [("route", route), ("target", target)]).increment()
    }

    /// An active health check of `target` failed (`kind`: refused, timeout, status).
    package func healthCheckFailed(target: String, kind: String) {
        GatewayMetrics.counter("gateway_upstream_health_check_failures_total", [("route", route), ("target", target), ("kind", kind)]).increment()
    }

    /// Whether `target` takes requests (1) or not (0: failing its checks or ejected).
    package func health(target: String, available: Bool) {
        Gauge(label: "gateway_upstream_target_healthy", dimensions: [("route", route), ("target", target)]).record(available ? 1 : 0)
    }

    /// Drops `target`'s health series: a reload or a DNS refresh removed it from `route`.
    package static func forgetHealth(route: String, target: String) {
        Gauge(label: "gateway_upstream_target_healthy", dimensions: [("route", route), ("target", target)]).destroy()
    }
}
