import Foundation
import GatewayEdge
import GatewayObservability
import GatewayPrimitives
import HTTPTypes
import KeyRegistry
import Metrics
import RateLimit
import Synchronization

/// Authenticates `X-API-Key` (docs/public-api.md) for the partner endpoints and `api_key` routes.
///
/// Good keys are checked from ``KeyVerifier``'s cache with no Redis round trip. Each failed
/// check spends a token from the client address's brute-force bucket
/// (`rate_limits.api_key_failures_per_ip`, IPv6 by network: ``RateLimitPolicies/addressSubject(_:)``);
/// once it is empty, every key the gateway does not know as valid gets 429 from that address
/// until a token is back, decided in process, so a refused request spends nothing.
/// Successful checks never touch that bucket, and a key the gateway knows is valid passes
/// even from a blocked address: one stale key on a partner's NAT must not take down the
/// partner's traffic from behind it (docs/DECISIONS.md, "Failed API-key checks"). Keys are
/// read only from the header, never from the query string.
package struct APIKeyAuthenticator: Sendable {
    package struct Identity: Sendable {
        package let key: KeyRecord
        package let partner: Partner
    }

    package let verifier: KeyVerifier
    package let limiter: any RateLimiter
    package let policies: RateLimitPolicies
    /// The days and months of quotas (`usage.time_zone`).
    package let quotaCalendar: QuotaCalendar
    /// Where calls with a known key are counted by outcome; nil counts nothing.
    package let usage: UsageCounter?
    private let blocked = FailureBlocklist()

    package init(
        verifier: KeyVerifier, limiter: any RateLimiter, policies: RateLimitPolicies, quotaCalendar: QuotaCalendar = .utc,
        usage: UsageCounter? = nil
    ) {
        self.verifier = verifier
        self.limiter = limiter
        self.policies = policies
        self.quotaCalendar = quotaCalendar
        self.usage = usage
    }

    package static let missing = GatewayError(.unauthorized, "MISSING_API_KEY", "an X-API-Key header is required")
    package static let invalid = GatewayError(.unauthorized, "INVALID_API_KEY", "the API key is invalid")
    package static let forbidden = GatewayError(.forbidden, "FORBIDDEN", "this API key may not do that")
    package static let addressNotAllowed = GatewayError(.forbidden, "FORBIDDEN", "this API key may not be used from this address")

    package func authenticate(_ headers: HTTPFields, clientIP: String?, scope: String?) async throws -> Identity {
        try await authenticate(presented: headers[.xAPIKey], clientIP: clientIP, scope: scope)
    }

    /// The identity of a good key found in the verifier's cache, answered synchronously; nil
    /// when that takes more (no key, an unknown or refused key, a blocked IP, a cache miss):
    /// ``authenticate(presented:clientIP:scope:)`` then decides, with its refusals and metrics.
    ///
    /// `last` is the caller's memo of the previous key (the proxy engine keeps one per
    /// connection): a partner's keep-alive connection carries one key on every request, and
    /// comparing it with the last one (in constant time: an edge may carry several partners'
    /// requests on one connection) is cheaper than checking and hashing it again, and the
    /// verifier's answer is remembered with it while no invalidation has arrived (for at most
    /// a second: ``KeyVerifier/cachedVerification(keyHash:scope:remembered:now:)``).
    package func cachedIdentity(presented: String?, clientIP: String?, scope: String?, last: inout LastKey?) -> Identity? {
        guard let presented, !presented.isEmpty, blocked.remaining(for: clientIP ?? "unknown") == nil else { return nil }
        let current: LastKey
        if let last, ConstantTime.equal(last.presented, presented) {
            current = last
        } else {
            guard let key = APIKey(presented) else { return nil }
            current = LastKey(presented: presented, hash: key.hash)
            last = current
        }
        let verification = verifier.cachedVerification(keyHash: current.hash, scope: scope, remembered: &current.verified)
        guard case .valid(let key, let partner) = verification,
              NetworkAllowlist.admits(clientIP: clientIP, key: key, partner: partner) else { return nil }
        Results.valid.increment()
        return Identity(key: key, partner: partner)
    }

    /// An `X-API-Key` header value, its hash, and the verifier's last good answer for it.
    /// A class: the memo is consulted on every request of a partner's connection, and a
    /// struct of the key, its record and its partner would be copied, field by field, each time.
    package final class LastKey {
        package let presented: String
        package let hash: String
        package var verified: KeyVerifier.Remembered?

        init(presented: String, hash: String) {
            self.presented = presented
            self.hash = hash
        }
    }

    /// ``authenticate(_:clientIP:scope:)`` from the `X-API-Key` header's value.
    package func authenticate(presented: String?, clientIP: String?, scope: String?) async throws -> Identity {
        guard let presented, !presented.isEmpty else {
            Results.missing.increment()
            throw Self.missing
        }
        let ip = policies.addressSubject(clientIP ?? "unknown")
        let blockedFor = blocked.remaining(for: ip)
        switch try await verifier.verify(presented, scope: scope) {
        case .valid(let key, let partner):
            guard NetworkAllowlist.admits(clientIP: clientIP, key: key, partner: partner) else {
                Results.forbidden.increment()
                usage?.record(keyID: key.id, .refusedAuth)
                throw Self.addressNotAllowed
            }
            Results.valid.increment()
            return Identity(key: key, partner: partner)
        case .forbidden(let key, _):
            Results.forbidden.increment()
            usage?.record(keyID: key.id, .refusedAuth)
            throw Self.forbidden
        case .invalid:
            if let blockedFor {
                Results.blocked.increment()
                throw GatewayError.rateLimited(retryAfter: blockedFor)
            }
            Results.invalid.increment()
            try await recordFailure(ip: ip)
            throw Self.invalid
        }
    }

    /// `gateway_api_key_verifications_total` by result, one handle each (this is the hot path
    /// of every partner request). Made on first use, which is after the metrics bootstrap.
    private enum Results {
        package static let valid = counter("valid")
        package static let invalid = counter("invalid")
        package static let forbidden = counter("forbidden")
        package static let missing = counter("missing")
        package static let blocked = counter("rate_limited")

        private static func counter(_ result: String) -> Counter {
            GatewayMetrics.counter("gateway_api_key_verifications_total", [("result", result)])
        }
    }

    private func recordFailure(ip: String) async throws {
        let bucket = policies.apiKeyFailures(clientIP: ip)
        guard let decision = try? await limiter.check([bucket]) else { return }
        if !decision.allowed {
            let wait = decision.secondsUntilAllowed.isFinite ? decision.secondsUntilAllowed : 3600
            blocked.block(ip, for: wait)
            throw GatewayError.rateLimited(retryAfter: wait)
        }
    }
}

/// IPs refused for failed key checks, until when (per instance; the bucket itself is global).
package final class FailureBlocklist: Sendable {
    private let entries = Mutex([String: ContinuousClock.Instant]())
    /// Whether any IP was ever blocked: lets every request of a well-behaved deployment skip
    /// the lock (it is checked on every partner request).
    private let used = Atomic(false)

    package func block(_ ip: String, for seconds: Double) {
        let until = ContinuousClock.now + .milliseconds(Int64(seconds * 1000))
        used.store(true, ordering: .releasing)
        entries.withLock { entries in
            if entries.count > 100_000 { entries = entries.filter { $0.value > ContinuousClock.now } }
            entries[ip] = until
        }
    }

    /// Seconds left on the IP's block, or nil when it is not blocked.
    package func remaining(for ip: String) -> Double? {
        guard used.load(ordering: .acquiring) else { return nil }
        return entries.withLock { entries in
            guard let until = entries[ip] else { return nil }
            let left = until - ContinuousClock.now
            if left <= .zero {
                entries[ip] = nil
                return nil
            }
            return left.inSeconds
        }
    }
}

extension HTTPField.Name {
    package static let xAPIKey = HTTPField.Name(HeaderName.apiKey.name)!
}
