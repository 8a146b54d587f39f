import Metrics

/// `gateway_idempotency_requests_total{route, result}`: what keyed requests (`Idempotency-Key`)
/// came to. `result` is one of a fixed few, never the key.
package enum IdempotencyMetrics {
    package enum Result: String, Sendable {
        /// A forwarded request's response was stored.
        case stored
        /// A repeat was answered with the stored response.
        case replayed
        /// A repeat arrived while the first was in flight (`409`).
        case conflict
        /// The key was reused for a different request (`422`).
        case mismatch
    }

    package static func counted(route: String, _ result: Result) {
        counters.handle(for: Labels(route: route, result: result)).increment()
    }

    private struct Labels: Hashable, Sendable {
        let route: String
        let result: Result
    }

    /// One per process: every keyed request counts, so its handle is looked up without a lock.
    private static let counters = MetricHandleTable<Labels, Counter> { labels in
        Counter(label: "gateway_idempotency_requests_total", dimensions: [("route", labels.route), ("result", labels.result.rawValue)])
    }
}
