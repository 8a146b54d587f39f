import GatewayPrimitives

/// String keys: `GET`, `SET`, and the generic key commands the gateway sends (`DEL`,
/// `EXISTS`, `PTTL`).
extension RedisCommand {
    public static func get(_ key: String) -> RedisCommand {
        RedisCommand("GET", keys: [key], isReadOnly: true)
    }

    /// `SET key value`, with `PX` when `expiry` is given and `NX` when `onlyIfAbsent`.
    public static func set(_ key: String, _ value: String, expiry: Duration? = nil, onlyIfAbsent: Bool = false) -> RedisCommand {
        var options: [String] = [value]
        if let expiry {
            options += ["PX", String(max(1, expiry.inMilliseconds))]
        }
        if onlyIfAbsent { options.append("NX") }
        return RedisCommand("SET", keys: [key], arguments: options)
    }

    /// `SET key value NX GET PX expiry` (Redis 7.0+): sets `key` only when it is absent and
    /// replies with what it held (nil: it was absent and is now set), in one atomic step.
    public static func setIfAbsentGettingOld(_ key: String, _ value: String, expiry: Duration) -> RedisCommand {
        RedisCommand("SET", keys: [key], arguments: [value, "NX", "GET", "PX", String(max(1, expiry.inMilliseconds))])
    }

    /// `DEL` of keys that share one cluster slot.
    public static func del(_ keys: [String]) -> RedisCommand {
        RedisCommand("DEL", keys: keys)
    }

    public static func exists(_ key: String) -> RedisCommand {
        RedisCommand("EXISTS", keys: [key], isReadOnly: true)
    }

    /// `EXPIREAT key seconds`: `key` goes at that Unix time.
    public static func expireAt(_ key: String, unixSeconds: Int) -> RedisCommand {
        RedisCommand("EXPIREAT", keys: [key], arguments: [String(unixSeconds)])
    }

    /// Milliseconds until `key` expires (-1: never, -2: no such key).
    public static func pttl(_ key: String) -> RedisCommand {
        RedisCommand("PTTL", keys: [key], isReadOnly: true)
    }
}
