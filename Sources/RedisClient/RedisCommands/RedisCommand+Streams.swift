/// Streams: `XADD`, `XRANGE`, `XREVRANGE`.
extension RedisCommand {
    /// Appends an entry with a Redis-made id, trimming the stream to about `maximumLength`.
    public static func xadd(_ key: String, maximumLength: Int, fieldsAndValues: [String]) -> RedisCommand {
        RedisCommand("XADD", keys: [key], arguments: ["MAXLEN", "~", String(maximumLength), "*"] + fieldsAndValues)
    }

    /// Up to `count` entries from `end` down to `start`, newest first (`+`/`-`: either end).
    public static func xrevrange(_ key: String, end: String, start: String, count: Int) -> RedisCommand {
        RedisCommand("XREVRANGE", keys: [key], arguments: [end, start, "COUNT", String(count)], isReadOnly: true)
    }

    /// Up to `count` entries from `start` up to `end`, oldest first (`-`/`+`: either end).
    public static func xrange(_ key: String, start: String, end: String, count: Int) -> RedisCommand {
        RedisCommand("XRANGE", keys: [key], arguments: [start, end, "COUNT", String(count)], isReadOnly: true)
    }
}
