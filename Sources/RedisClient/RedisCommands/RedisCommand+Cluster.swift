/// What the pool asks cluster nodes and sentinels about the deployment itself.
extension RedisCommand {
    /// The slot map (Redis 7 and later).
    static let clusterShards = RedisCommand("CLUSTER", arguments: ["SHARDS"], isReadOnly: true)
    /// The slot map as Redis before 7 gives it.
    static let clusterSlots = RedisCommand("CLUSTER", arguments: ["SLOTS"], isReadOnly: true)

    /// Asked of a sentinel: the `[host, port]` of `masterName`'s primary.
    static func sentinelPrimary(of masterName: String) -> RedisCommand {
        RedisCommand("SENTINEL", arguments: ["get-master-addr-by-name", masterName], isReadOnly: true)
    }
}
