import Metrics

/// The driver-login counters (what an operator of driver logins watches): OTP sends and verifications,
/// revocations (refreshes: ``RefreshMetrics``), SDK tokens per partner, refused access
/// tokens. Each handle is made once per label set (``GatewayMetrics/counter(_:_:)``).
package enum AuthMetrics {
    package static func otpSent(mode: String) {
        GatewayMetrics.counter("gateway_otp_sent_total", [("mode", mode)]).increment()
    }

    package static func otpDeliveryFailed() {
        GatewayMetrics.counter("gateway_otp_delivery_failures_total").increment()
    }

    /// `result`: accepted, wrong, locked, expired, missing, daily_limit.
    package static func otpVerified(_ result: String) {
        GatewayMetrics.counter("gateway_otp_verifications_total", [("result", result)]).increment()
    }

    /// `kind`: logout, reuse, admin.
    package static func sessionsRevoked(_ kind: String, count: Int = 1) {
        GatewayMetrics.counter("gateway_session_revocations_total", [("kind", kind)]).increment(by: count)
    }

    package static func sdkTokenMinted(partnerID: String) {
        GatewayMetrics.counter("gateway_sdk_tokens_minted_total", [("partner_id", partnerID)]).increment()
    }

    /// `reason`: an ``AccessTokenError`` code, or `revoked`.
    package static func accessTokenRefused(_ reason: String) {
        GatewayMetrics.counter("gateway_access_token_refusals_total", [("reason", reason)]).increment()
    }
}
