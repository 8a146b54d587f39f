import RedisClient

/// A check of some buckets made ready to send (``RateLimiter/prepare(_:)``): a caller that
/// checks the same buckets request after request (a client connection with one user on it)
/// keeps it, so the bucket keys and the store's command are built once.
public final class RateLimitCheck: Sendable {
    public let buckets: [RateLimitBucket]
    /// The store's command, when the limiter is ``RedisRateLimiter`` and the buckets share a
    /// Redis Cluster slot (or Redis is not a cluster).
    let scriptCall: RedisScriptCall?
    /// On a cluster, buckets of several slots: one check per slot, made in this order.
    let slots: [RateLimitCheck]
    /// Tells checks of the same buckets apart from others where checks are gathered
    /// (``TokenBucketBatches``): made once here, so gathering hashes one string per check
    /// rather than the list of buckets.
    let batchKey: String
    /// ``batchKey``'s hash, worked out once for the same reason.
    let batchHash: Int

    init(buckets: [RateLimitBucket], scriptCall: RedisScriptCall? = nil, slots: [RateLimitCheck] = []) {
        self.buckets = buckets
        self.scriptCall = scriptCall
        self.slots = slots
        batchKey = buckets.map { "\($0.key)\u{0}\($0.limit.capacity)\u{0}\($0.limit.refillPerSecond)" }.joined(separator: "\u{1}")
        batchHash = batchKey.hashValue
    }
}
