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

    public init(key: String, limit: TokenBucket) {
        self.key = key
        self.limit = limit
    }
}
