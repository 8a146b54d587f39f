/// Sets: `SADD`, `SREM`, `SMEMBERS`, `SRANDMEMBER`.
extension RedisCommand {
    public static func sadd(_ key: String, _ members: [String]) -> RedisCommand {
        RedisCommand("SADD", keys: [key], arguments: members)
    }

    public static func srem(_ key: String, _ members: [String]) -> RedisCommand {
        RedisCommand("SREM", keys: [key], arguments: members)
    }

    public static func smembers(_ key: String) -> RedisCommand {
        RedisCommand("SMEMBERS", keys: [key], isReadOnly: true)
    }

    /// Up to `count` distinct members, at random.
    public static func srandmember(_ key: String, count: Int) -> RedisCommand {
        RedisCommand("SRANDMEMBER", keys: [key], arguments: [String(count)], isReadOnly: true)
    }
}
