/// Every setting of the Redis client, in one place.
public struct RedisConfiguration: Sendable, Hashable {
    /// Where Redis is (`redis.url`).
    public var url: RedisURL
    /// How many pipelined connections the pool keeps (`redis.pool_size`). Each one carries
    /// many commands at once, so a handful per CPU core is plenty.
    public var poolSize: Int
    /// The deadline of every command and of every connection attempt (`redis.timeout`).
    public var timeout: Duration
    /// After a failed connection attempt, a slot answers with that failure for this long
    /// instead of dialling again, so a dead Redis costs callers nothing but a fast error.
    public var reconnectBackoff: Duration

    public init(
        url: RedisURL = RedisURL(),
        poolSize: Int = 16,
        timeout: Duration = .milliseconds(250),
        reconnectBackoff: Duration = .milliseconds(100)
    ) {
        self.url = url
        self.poolSize = max(1, poolSize)
        self.timeout = timeout
        self.reconnectBackoff = reconnectBackoff
    }
}
