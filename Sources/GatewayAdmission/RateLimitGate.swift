import GatewayConfiguration
import GatewayEdge
import GatewayObservability
import HTTPTypes
import Logging
import Metrics
import NIOCore
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
package struct RateLimitGate: Sendable {
    package enum OnStoreError: Sendable {
        case failClosed
        case storePolicy(GatewayConfig.RateLimits.StoreErrorPolicy)
    }

    package let limiter: any RateLimiter
    package let logger: Logger
    private let fallbackLog = ThrottledLog(interval: .seconds(10))

    package init(limiter: any RateLimiter, logger: Logger) {
        self.limiter = limiter
        self.logger = logger
    }

    /// What a decision is counted under (`policy` of `gateway_rate_limit_decisions_total`),
    /// with its counters made once, so that no request looks a counter up by its labels.
    package final class Policy: Sendable {
        package let name: String
        fileprivate let allowed: Counter
        fileprivate let limited: Counter
        fileprivate let storeErrorAllowed: Counter
        fileprivate let storeErrorDenied: Counter
        fileprivate let storeErrors: Counter

        private init(_ name: String) {
            self.name = name
            func decisions(_ outcome: String) -> Counter {
                GatewayMetrics.counter("gateway_rate_limit_decisions_total", [("policy", name), ("outcome", outcome)])
            }
            allowed = decisions("allowed")
            limited = decisions("limited")
            storeErrorAllowed = decisions("store_error_allowed")
            storeErrorDenied = decisions("store_error_denied")
            storeErrors = GatewayMetrics.counter("gateway_rate_limit_store_errors_total", [("policy", name)])
        }

        /// A proxied route's `rate_limit`.
        package static let route = Policy("route")
        /// OTP triggers, per phone and per client address.
        package static let otpTrigger = Policy("otp_trigger")
        /// OTP verifications per client address (its failures).
        package static let otpVerify = Policy("otp_verify")
        /// A partner's own `rate`/`burst` (SDK token mints).
        package static let partner = Policy("partner")
        /// A key's or partner's quota on a proxied route without a `rate_limit`.
        package static let quota = Policy("quota")
    }

    /// Returns the `RateLimit-*` headers for the response, or throws `429` (with them and
    /// `Retry-After`) or `503`. For a Swift task: it waits on ``admission(_:policy:onStoreError:)``.
    package func admit(_ buckets: [RateLimitBucket], policy: Policy, onStoreError: OnStoreError) async throws -> HTTPFields {
        try await admission(buckets, policy: policy, onStoreError: onStoreError).get()
    }

    /// The same check, sent now and awaited later: an endpoint reads something else from Redis
    /// while it runs, without a child task. Runs the event-loop form below on one of the
    /// limiter's loops (a task's own, when it runs on one).
    package func admission(_ buckets: [RateLimitBucket], policy: Policy, onStoreError: OnStoreError) -> EventLoopFuture<HTTPFields> {
        let eventLoop = limiter.eventLoopGroup.any()
        guard !buckets.isEmpty else { return eventLoop.makeSucceededFuture([:]) }
        return admit(limiter.prepare(buckets), policy: policy, onStoreError: onStoreError, on: eventLoop) { $0 }
    }

    /// The decision on `eventLoop` (the proxy engine's: its client connection's loop): one Redis
    /// round trip for the whole prepared check, decided where the reply is read. `then` makes
    /// the caller's value from the headers inside the limiter's callback, so a request costs
    /// one promise here (the one returned) and one callback.
    /// `refused`, when given, is told of a refusal (usage counting); `decided` of every
    /// decision the store made (the verify API reports its buckets).
    package func admit<Admitted: Sendable>(
        _ check: RateLimitCheck, policy: Policy, onStoreError: OnStoreError, on eventLoop: any EventLoop,
        refused: (@Sendable (RateLimitDecision) -> Void)? = nil, decided observer: (@Sendable (RateLimitDecision) -> Void)? = nil,
        then admitted: @escaping @Sendable (HTTPFields) -> Admitted
    ) -> EventLoopFuture<Admitted> {
        let decided = eventLoop.makePromise(of: Admitted.self)
        limiter.check(check, on: eventLoop) { decision in
            if case .success(let decision) = decision {
                if let refused, !decision.allowed { refused(decision) }
                observer?(decision)
            }
            decided.completeWith(Result { admitted(try self.decided(decision, policy: policy, onStoreError: onStoreError)) })
        }
        return decided.futureResult
    }

    /// `429 QUOTA_EXCEEDED`, with `Retry-After` at the start of the next period.
    package static func quotaExceeded(headers: HTTPFields) -> GatewayError {
        GatewayError(.tooManyRequests, "QUOTA_EXCEEDED", "the API key's quota for this period is used up", headers: headers)
    }

    /// The response to a decision, or to the store's failure to make one.
    private func decided(_ decision: Result<RateLimitDecision, any Error>, policy: Policy, onStoreError: OnStoreError) throws -> HTTPFields {
        switch decision {
        case .failure(let error):
            policy.storeErrors.increment()
            if fallbackLog.shouldLog(policy.name) {
                logger.warning("rate limiter unavailable, applying the failure policy", metadata: [
                    "policy": .string(policy.name), "error": .string("\(error)"),
                ])
            }
            switch onStoreError {
            case .storePolicy(.allow):
                policy.storeErrorAllowed.increment()
                return [:]
            case .failClosed, .storePolicy(.deny):
                policy.storeErrorDenied.increment()
                throw GatewayError.serviceUnavailable
            }
        case .success(let decision):
            let headers = RateLimitHeaders.fields(for: decision)
            guard decision.allowed else {
                policy.limited.increment()
                if decision.exceededQuota { throw Self.quotaExceeded(headers: headers) }
                throw GatewayError(.tooManyRequests, "RATE_LIMIT_EXCEEDED", "too many requests, retry later", headers: headers)
            }
            policy.allowed.increment()
            return headers
        }
    }
}

/// Lets one log line per key through per `interval`.
package final class ThrottledLog: Sendable {
    private let interval: Duration
    private let last = Mutex([String: ContinuousClock.Instant]())

    package init(interval: Duration) {
        self.interval = interval
    }

    package func shouldLog(_ key: String) -> Bool {
        let now = ContinuousClock.now
        return last.withLock { last in
            if let previous = last[key], now - previous < interval { return false }
            last[key] = now
            return true
        }
    }
}
