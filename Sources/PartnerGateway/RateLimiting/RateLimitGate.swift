import HTTPTypes
import Logging
import Metrics
import RateLimit
import Synchronization

/// Applies a rate-limit decision to a request, with the store-failure policy (docs/security-model.md):
///
/// - `failClosed` (auth endpoints: OTP, refresh, logout, SDK tokens): when Redis cannot
///   answer within `redis.timeout`, the request gets `503 SERVICE_UNAVAILABLE`.
/// - `storePolicy(.allow)` (proxied routes with `on_store_error: allow`): the request goes
///   through unlimited; `.deny` answers 503 like fail-closed.
///
/// Every decision is counted by policy and outcome; every fallback is counted and logged
/// (the log line itself at most once per 10 s per policy).
struct RateLimitGate: Sendable {
    enum OnStoreError: Sendable {
        case failClosed
        case storePolicy(GatewayConfig.RateLimits.StoreErrorPolicy)
    }

    let limiter: any RateLimiter
    let logger: Logger
    private let fallbackLog = ThrottledLog(interval: .seconds(10))

    init(limiter: any RateLimiter, logger: Logger) {
        self.limiter = limiter
        self.logger = logger
    }

    /// Returns the `RateLimit-*` headers for the response, or throws `429` (with them and
    /// `Retry-After`) or `503`.
    func admit(_ buckets: [RateLimitBucket], policy: String, onStoreError: OnStoreError) async throws -> HTTPFields {
        guard !buckets.isEmpty else { return [:] }
        let decision: RateLimitDecision
        do {
            decision = try await limiter.check(buckets)
        } catch {
            GatewayMetrics.counter("gateway_rate_limit_store_errors_total", [("policy", policy)]).increment()
            if fallbackLog.shouldLog(policy) {
                logger.warning("rate limiter unavailable, applying the failure policy", metadata: [
                    "policy": .string(policy), "error": .string("\(error)"),
                ])
            }
            switch onStoreError {
            case .storePolicy(.allow):
                GatewayMetrics.counter("gateway_rate_limit_decisions_total", [("policy", policy), ("outcome", "store_error_allowed")]).increment()
                return [:]
            case .failClosed, .storePolicy(.deny):
                GatewayMetrics.counter("gateway_rate_limit_decisions_total", [("policy", policy), ("outcome", "store_error_denied")]).increment()
                throw GatewayError.serviceUnavailable
            }
        }
        let headers = RateLimitHeaders.fields(for: decision)
        GatewayMetrics.counter("gateway_rate_limit_decisions_total", [("policy", policy), ("outcome", decision.allowed ? "allowed" : "limited")]).increment()
        guard decision.allowed else {
            throw GatewayError(.tooManyRequests, "RATE_LIMIT_EXCEEDED", "too many requests, retry later", headers: headers)
        }
        return headers
    }
}

/// Lets one log line per key through per `interval`.
final class ThrottledLog: Sendable {
    private let interval: Duration
    private let last = Mutex([String: ContinuousClock.Instant]())

    init(interval: Duration) {
        self.interval = interval
    }

    func shouldLog(_ key: String) -> Bool {
        let now = ContinuousClock.now
        return last.withLock { last in
            if let previous = last[key], now - previous < interval { return false }
            last[key] = now
            return true
        }
    }
}
