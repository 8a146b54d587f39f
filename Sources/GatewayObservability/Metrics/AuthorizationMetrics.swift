import Metrics

/// `gateway_authorization_decisions_total`: what the authorization listener answered edges
/// (`forward`) and services (`verify`), by route, decision and reason, each label set's counter
/// made once (``MetricHandleTable``; one table per process).
package enum AuthorizationMetrics {
    package struct Labels: Hashable, Sendable {
        /// `forward` or `verify`.
        package let kind: String
        /// The route's name (``RouteLabel``), `unmatched` for a forward request no route takes,
        /// `none` for a verification that names no route.
        package let route: String
        /// `allowed` or `refused`.
        package let decision: String
        /// `ok` (a credential), `none` (an `auth: none` route) or the refusal's error code.
        package let reason: String

        package init(kind: String, route: String, decision: String, reason: String) {
            self.kind = kind
            self.route = route
            self.decision = decision
            self.reason = reason
        }
    }

    private static let table = MetricHandleTable<Labels, Counter> { labels in
        Counter(label: "gateway_authorization_decisions_total", dimensions: [
            ("kind", labels.kind), ("route", labels.route), ("decision", labels.decision), ("reason", labels.reason),
        ])
    }

    package static func decided(_ labels: Labels) {
        table.handle(for: labels).increment()
    }
}
