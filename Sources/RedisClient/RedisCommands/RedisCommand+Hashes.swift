/// Hashes: `HGET`, `HMGET`, `HGETALL`, `HSET`, `HINCRBY`.
extension RedisCommand {
    public static func hget(_ key: String, _ field: String) -> RedisCommand {
        RedisCommand("HGET", keys: [key], arguments: [field], isReadOnly: true)
    }

    public static func hmget(_ key: String, _ fields: [String]) -> RedisCommand {
        RedisCommand("HMGET", keys: [key], arguments: fields, isReadOnly: true)
    }

    public static func hgetall(_ key: String) -> RedisCommand {
        RedisCommand("HGETALL", keys: [key], isReadOnly: true)
    }

    /// `HSET key field value field value ...`: `fieldsAndValues` alternates the two.
    public static func hset(_ key: String, _ fieldsAndValues: [String]) -> RedisCommand {
        RedisCommand("HSET", keys: [key], arguments: fieldsAndValues)
    }

    public static func hincrby(_ key: String, _ field: String, by amount: Int) -> RedisCommand {
        RedisCommand("HINCRBY", keys: [key], arguments: [field, String(amount)])
    }
}
