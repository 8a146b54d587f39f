/// Every setting of the Redis client, in one place.
public struct RedisConfiguration: Sendable {
    /// Where Redis is and who the gateway logs in as (`redis.url`, the password from
    /// `redis.password_env`).
    public var url: RedisURL
    /// Set for `rediss://` URLs: every connection (pool and subscriber) is TLS. Ignored for
    /// `redis://` ones.
    public var tls: RedisTLS?
    /// Set with `redis.sentinel`: the primary's address comes from the sentinels, and the
    /// URL's host and port are not used.
    public var sentinel: RedisSentinel?
    /// How many pipelined connections the pool keeps (`redis.pool_size`). Each one carries
    /// many commands at once, so a handful per CPU core is plenty.
    public var poolSize: Int
    /// The deadline of every command and of every connection attempt (`redis.timeout`).
    public var timeout: Duration
    /// After a failed connection attempt, a slot answers with that failure for this long
    /// instead of dialling again, so a dead Redis costs callers nothing but a fast error.
    public var reconnectBackoff: Duration
    /// `redis.wait_replicas`: scripts that must survive a failover are answered only once this
    /// many replicas confirmed them (`WAIT`), within half of `timeout`; 0 never waits.
    public var waitReplicas: Int

    public init(
        url: RedisURL = RedisURL(),
        tls: RedisTLS? = nil,
        sentinel: RedisSentinel? = nil,
        poolSize: Int = 16,
        timeout: Duration = .milliseconds(250),
        reconnectBackoff: Duration = .milliseconds(100),
        waitReplicas: Int = 0
    ) {
        self.waitReplicas = max(0, waitReplicas)
        self.url = url
        // `rediss://` without `redis.tls`: the system's trust store and the URL's host name.
        self.tls = url.usesTLS ? (tls ?? (try? RedisTLS())) : nil
        self.sentinel = sentinel
        self.poolSize = max(1, poolSize)
        self.timeout = timeout
        self.reconnectBackoff = reconnectBackoff
    }
}
