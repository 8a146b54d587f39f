import Metrics
import Synchronization

/// The driver-login counters (the seed's "monitor" list): OTP sends and verifications,
/// refreshes and reuse detections, revocations, SDK tokens per partner, refused access
/// tokens. Handles with fixed labels are made once; per-partner ones are kept by partner.
enum AuthMetrics {
    static func otpSent(mode: String) {
        Counter(label: "gateway_otp_sent_total", dimensions: [("mode", mode)]).increment()
    }

    static func otpDeliveryFailed() {
        Counter(label: "gateway_otp_delivery_failures_total").increment()
    }

    /// `result`: accepted, wrong, locked, expired, missing, daily_limit.
    static func otpVerified(_ result: String) {
        Counter(label: "gateway_otp_verifications_total", dimensions: [("result", result)]).increment()
    }

    /// `result`: rotated, refused, reused.
    static func refreshed(_ result: String) {
        Counter(label: "gateway_token_refreshes_total", dimensions: [("result", result)]).increment()
        if result == "reused" {
            Counter(label: "gateway_refresh_token_reuse_total").increment()
        }
    }

    /// `kind`: logout, reuse, admin.
    static func sessionsRevoked(_ kind: String, count: Int = 1) {
        Counter(label: "gateway_session_revocations_total", dimensions: [("kind", kind)]).increment(by: count)
    }

    static func sdkTokenMinted(partnerID: String) {
        let counter = sdkCounters.withLock { counters in
            if let counter = counters[partnerID] { return counter }
            let counter = Counter(label: "gateway_sdk_tokens_minted_total", dimensions: [("partner_id", partnerID)])
            counters[partnerID] = counter
            return counter
        }
        counter.increment()
    }

    /// `reason`: an ``AccessTokenError`` code, or `revoked`.
    static func accessTokenRefused(_ reason: String) {
        Counter(label: "gateway_access_token_refusals_total", dimensions: [("reason", reason)]).increment()
    }

    private static let sdkCounters = Mutex([String: Counter]())
}
