import Metrics

/// What issue 6 asks to watch per route: how long upstreams take to answer, what they
/// answer, and how forwarding fails.
enum UpstreamMetrics {
    /// Time from sending the request to the upstream's response head.
    static func answered(route: String, status: Int, after duration: Duration) {
        GatewayMetrics.timer("gateway_upstream_duration_seconds", [("route", route)]).record(duration: duration)
        GatewayMetrics.counter("gateway_upstream_responses_total", [("route", route), ("status", String(status))]).increment()
    }

    /// `kind`: refused, reset, timeout, malformed (``UpstreamError``), or body_too_large.
    static func failed(route: String, kind: String) {
        GatewayMetrics.counter("gateway_upstream_errors_total", [("route", route), ("kind", kind)]).increment()
    }
}
