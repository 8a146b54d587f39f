import Metrics

/// What `POST /auth/token/refresh` did, so a dashboard tells drivers' flaky networks (retries
/// answered within the reuse interval) from copied tokens (reuse that revoked a session).
package enum RefreshMetrics {
    package enum Result: String {
        /// The token was spent and a new pair issued.
        case rotated
        /// A spent token came back within `tokens.refresh_reuse_interval` while its successor
        /// was still current: a lost answer or concurrent refreshes; answered with the same
        /// successor.
        case retried
        /// A spent token came back outside that case: the session was revoked.
        case reused
        /// Unknown, malformed, expired or revoked: nothing changed.
        case refused
    }

    /// `gateway_token_refreshes_total{result}`; detected reuse also counts in
    /// `gateway_refresh_token_reuse_total`, which alerts can watch alone.
    package static func refreshed(_ result: Result) {
        GatewayMetrics.counter("gateway_token_refreshes_total", [("result", result.rawValue)]).increment()
        if result == .reused {
            GatewayMetrics.counter("gateway_refresh_token_reuse_total").increment()
        }
    }
}
