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
        GatewayMetrics.counter("gateway_idempotency_requests_total", [("route", route), ("result", result.rawValue)]).increment()
    }
}
