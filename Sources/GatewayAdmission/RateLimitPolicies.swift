import GatewayConfiguration
import GatewayPrimitives
import KeyRegistry
import RateLimit

/// Every rate-limit rule of the gateway, in one place: which buckets a request draws from.
///
/// Bucket keys never hold a phone number in clear (docs/security-model.md): phones appear only as their
/// keyed digest (`PhoneHasher`).
///
/// The `rate_limits` section is live: a configuration reload replaces it for every holder.
package struct RateLimitPolicies: Sendable {
    private let current: LiveValue<GatewayConfig.RateLimits>

    package init(limits: GatewayConfig.RateLimits) {
        current = LiveValue(limits)
    }

    package var limits: GatewayConfig.RateLimits { current.value }

    /// A reload's new `rate_limits`.
    package func replace(_ limits: GatewayConfig.RateLimits) {
        current.replace(limits)
    }

    /// OTP trigger (docs/public-api.md): per subject (a phone's tag, or a portal member's email's)
    /// and per client IP, checked together; a request refused by either spends neither (on
    /// Redis Cluster, where they are checked in turn, one the other refuses may be spent).
    package func otpTrigger(tag: String, clientIP: String) -> [RateLimitBucket] {
        [
            RateLimitBucket(key: Self.otpPhoneBucket(tag), limit: limits.otpTriggerPerPhone.tokenBucket),
            RateLimitBucket(key: "otp-ip:\(addressSubject(clientIP))", limit: limits.otpTriggerPerIP.tokenBucket),
        ]
    }

    /// Failed OTP verifications per client IP, whatever the phone (docs/public-api.md): each
    /// verify takes a token before the code is checked and a right code gives it back.
    package func otpVerifyFailures(clientIP: String) -> RateLimitBucket {
        RateLimitBucket(key: "otp-verify-ip:\(addressSubject(clientIP))", limit: limits.otpVerifyFailuresPerIP.tokenBucket)
    }

    /// Failed API-key checks per client IP (brute force; docs/public-api.md, "Partner keys").
    package func apiKeyFailures(clientIP: String) -> RateLimitBucket {
        RateLimitBucket(key: "apikey-fail:\(addressSubject(clientIP))", limit: limits.apiKeyFailuresPerIP.tokenBucket)
    }

    /// Whom a per-address bucket counts: an IPv4 client by its address, an IPv6 client by its
    /// network of `rate_limits.ipv6_prefix_length` bits (`2001:db8:1:2::/64`). One subscriber
    /// is usually given a whole /64, so keying on the full address would hand a single client
    /// 2^64 buckets. An IPv4-mapped IPv6 address counts as the IPv4 address it carries.
    package func addressSubject(_ clientIP: String) -> String {
        guard clientIP.utf8.contains(UInt8(ascii: ":")), let address = CIDR.parseAddress(clientIP), address.count == 16 else {
            return clientIP
        }
        if let mapped = CIDR.mappedIPv4(address) { return CIDR.format(mapped) }
        return CIDR(address: address, prefixLength: limits.ipv6PrefixLength).description
    }

    /// A partner's own `rate`/`burst` (set with `gatewayctl partners create`).
    package func partner(_ partner: Partner) -> RateLimitBucket {
        RateLimitBucket(key: "partner:\(partner.id)", limit: TokenBucket(capacity: partner.burst, refillPerSecond: partner.rate))
    }

    /// A route's `rate_limit`, per user, partner or client IP; nil when the route has none or
    /// the request has no such identity. Per partner on a `bearer` route, a driver's own login
    /// (a token of no partner) counts in its user's bucket, as Kong's `consumer` limit falls
    /// back: no caller passes unlimited.
    package func route(_ route: AdmissionRoute, userID: String?, partnerID: String?, clientIP: String?) -> RateLimitBucket? {
        guard let limit = route.rateLimit else { return nil }
        let subject: String?
        switch limit.per {
        case .user: subject = userID.map(Self.userSubject)
        case .partner: subject = partnerID.map { "partner:\($0)" } ?? userID.map(Self.userSubject)
        case .ip: subject = clientIP.map { "ip:\(addressSubject($0))" }
        }
        guard let subject else { return nil }
        return RateLimitBucket(key: Self.routeBucket(route.name, subject: subject), limit: limit.bucket.tokenBucket)
    }

    package static func otpPhoneBucket(_ phoneTag: String) -> String { "otp-phone:\(phoneTag)" }
    package static func userSubject(_ userID: String) -> String { "user:\(userID)" }
    package static func routeBucket(_ route: String, subject: String) -> String { "route:\(route):\(subject)" }
}

extension GatewayConfig.Bucket {
    package var tokenBucket: TokenBucket {
        TokenBucket(capacity: capacity, refillPerSecond: refillPerSecond)
    }
}
