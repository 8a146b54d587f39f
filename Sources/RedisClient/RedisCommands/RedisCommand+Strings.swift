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
        setGettingOld(key, value.utf8, condition: "NX", expiry: expiry)
    }

    /// `SET key value XX GET PX expiry` (Redis 6.2+): replaces `key` only when it exists and
    /// replies with what it held (nil: it was absent and stays so), in one atomic step. The
    /// value is bytes, written as they are.
    public static func replaceGettingOld(_ key: String, _ value: [UInt8], expiry: Duration) -> RedisCommand {
        setGettingOld(key, value, condition: "XX", expiry: expiry)
    }

    /// Both conditional `SET … GET`s, encoded straight into their buffer: each keyed request
    /// with `Idempotency-Key` makes two.
    private static func setGettingOld(_ key: String, _ value: some Collection<UInt8>, condition: String, expiry: Duration) -> RedisCommand {
        let encoded = RESPWriter.encode { resp in
            resp.array(7)
            resp.bulk("SET")
            resp.bulk(key)
            resp.bulk(value)
            resp.bulk(condition)
            resp.bulk("GET")
            resp.bulk("PX")
            resp.bulk(decimal: Int(max(1, expiry.inMilliseconds)))
        }
        return RedisCommand(encoded: encoded, keys: [key], isReadOnly: false, name: "SET")
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
