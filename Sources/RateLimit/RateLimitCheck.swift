import RedisClient

/// A check of some buckets made ready to send (``RateLimiter/prepare(_:)``): a caller that
/// checks the same buckets request after request (a client connection with one user on it)
/// keeps it, so the bucket keys and the store's command are built once.
public struct RateLimitCheck: Sendable {
    public let buckets: [RateLimitBucket]
    /// The store's command, when the limiter is ``RedisRateLimiter``.
    let scriptCall: RedisScriptCall?

    init(buckets: [RateLimitBucket], scriptCall: RedisScriptCall? = nil) {
        self.buckets = buckets
        self.scriptCall = scriptCall
    }
}
