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
    /// Set with `redis.cluster`: the slot map comes from these nodes and every command goes to
    /// its key's primary; the URL's host and port are not used (its scheme, user and password
    /// apply to every node, and its database must be 0).
    public var cluster: RedisCluster?
    /// How many pipelined connections the pool keeps (`redis.pool_size`), per primary on a
    /// cluster. Each one carries
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
    /// `redis.flush_interval_us`: the least time between two writes of a pool connection's
    /// commands. Commands made within it of the last write wait for the next one, so a busy
    /// connection makes fewer, larger writes (each wakes Redis), at the price of that wait.
    /// Zero (the default) writes at the end of every event-loop tick.
    public var flushInterval: Duration

    public init(
        url: RedisURL = RedisURL(),
        tls: RedisTLS? = nil,
        sentinel: RedisSentinel? = nil,
        cluster: RedisCluster? = nil,
        poolSize: Int = 16,
        timeout: Duration = .milliseconds(250),
        reconnectBackoff: Duration = .milliseconds(100),
        waitReplicas: Int = 0,
        flushInterval: Duration = .zero
    ) {
        self.waitReplicas = max(0, waitReplicas)
        self.flushInterval = max(.zero, flushInterval)
        self.url = url
        // `rediss://` without `redis.tls`: the system's trust store and the URL's host name.
        self.tls = url.usesTLS ? (tls ?? (try? RedisTLS())) : nil
        self.sentinel = sentinel
        self.cluster = cluster
        self.poolSize = max(1, poolSize)
        self.timeout = timeout
        self.reconnectBackoff = reconnectBackoff
    }
}

extension RedisConfiguration {
    /// These settings aimed at one node directly: its address in the URL, no Sentinel or
    /// Cluster lookup.
    func direct(to node: RedisNodeAddress) -> RedisConfiguration {
        var direct = self
        direct.url = node.url(from: url)
        direct.sentinel = nil
        direct.cluster = nil
        return direct
    }
}
