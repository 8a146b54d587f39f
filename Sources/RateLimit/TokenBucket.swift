/// A token bucket: up to `capacity` requests at once, refilled at `refillPerSecond`.
///
/// A fresh bucket is full. Each admitted request takes one token; a refused one takes none.
public struct TokenBucket: Sendable, Hashable {
    public var capacity: Int
    public var refillPerSecond: Double

    public init(capacity: Int, refillPerSecond: Double) {
        self.capacity = capacity
        self.refillPerSecond = refillPerSecond
    }
}

/// One bucket to check: which one (`key`, e.g. `otp-phone:<hash>`) and its shape.
public struct RateLimitBucket: Sendable, Hashable {
    /// Identifies the bucket; the limiter adds its own prefix and a Cluster hash tag.
    public var key: String
    public var limit: TokenBucket
    /// Set for a quota: a counter of one calendar period (its `key` names the period) that
    /// admits `limit.capacity` requests and ends at this Unix time; it never refills.
    public var quotaEnd: Int?

    public init(key: String, limit: TokenBucket) {
        self.key = key
        self.limit = limit
    }

    /// A quota of `limit` requests in the period `key` names, which ends at `periodEnd` (Unix
    /// seconds). The limit is sent with every check rather than stored with the count, so a
    /// raised quota admits more at once.
    public static func quota(key: String, limit: Int, periodEnd: Int) -> RateLimitBucket {
        var bucket = RateLimitBucket(key: key, limit: TokenBucket(capacity: limit, refillPerSecond: 0))
        bucket.quotaEnd = periodEnd
        return bucket
    }
}
