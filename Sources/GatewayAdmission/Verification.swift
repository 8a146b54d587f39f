import RateLimit

/// What the verify API (`POST /v1/verify` on the authorization listener) answers about one
/// credential: whether a proxied request carrying it would be admitted, the refusal's code
/// when not, who it names, and its limits after this call. Written out so absent values are
/// `null`, never missing keys, as the admin API's are.
package struct Verification: Sendable, Encodable, Equatable {
    /// A bucket's state after the call, as the `RateLimit-*` fields tell it.
    package struct Limit: Sendable, Encodable, Equatable {
        package let limit: Int
        package let remaining: Int
        /// Seconds until it is full again (a quota: until its next period starts).
        package let reset: Int

        init(_ bucket: RateLimitDecision.BucketState) {
            limit = bucket.limit.capacity
            remaining = bucket.remaining
            reset = RateLimitHeaders.wholeSeconds(bucket.secondsUntilFull)
        }
    }

    package let valid: Bool
    /// The error code a proxied request would get (`INVALID_API_KEY`, `QUOTA_EXCEEDED`, ...).
    package let code: String?
    package let keyID: String?
    package let partnerID: String?
    package let userID: String?
    /// The key's scopes (API keys only).
    package let scopes: [String]?
    /// The tightest of the key's and its partner's quotas, spent by this call; only with a route.
    package let quota: Limit?
    /// The route's rate limit, spent by this call; only with a route that has one.
    package let rateLimit: Limit?

    /// An admitted caller, and the limits' decision when there was one.
    init(admitted identity: ProxyIdentity, decision: RateLimitDecision?) {
        valid = true
        code = nil
        keyID = identity.keyID
        partnerID = identity.partnerID
        userID = identity.userID
        scopes = identity.scopes
        (quota, rateLimit) = Self.limits(of: decision)
    }

    /// A refusal with `code`; the limits when they were what refused it.
    init(refused code: String, decision: RateLimitDecision?) {
        valid = false
        self.code = code
        keyID = nil
        partnerID = nil
        userID = nil
        scopes = nil
        (quota, rateLimit) = Self.limits(of: decision)
    }

    /// The route's bucket and the tightest quota of a decision (a quota is its own bucket,
    /// ``QuotaBuckets``).
    private static func limits(of decision: RateLimitDecision?) -> (quota: Limit?, rateLimit: Limit?) {
        guard let buckets = decision?.buckets else { return (nil, nil) }
        let quota = buckets.filter(\.isQuota).min { $0.remaining < $1.remaining }
        return (quota.map(Limit.init), buckets.first { !$0.isQuota }.map(Limit.init))
    }

    enum CodingKeys: String, CodingKey {
        case valid, code, scopes, quota
        case keyID = "key_id"
        case partnerID = "partner_id"
        case userID = "user_id"
        case rateLimit = "rate_limit"
    }

    package func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(valid, forKey: .valid)
        try container.encode(code, forKey: .code)
        try container.encode(keyID, forKey: .keyID)
        try container.encode(partnerID, forKey: .partnerID)
        try container.encode(userID, forKey: .userID)
        try container.encode(scopes, forKey: .scopes)
        try container.encode(quota, forKey: .quota)
        try container.encode(rateLimit, forKey: .rateLimit)
    }
}
