/// Sorted sets: `ZADD`, `ZRANK`, `ZREVRANK`, `ZRANGE`.
extension RedisCommand {
    /// `ZADD key score member`; the score already formatted (it decides the order).
    /// `onlyIfAbsent` (`NX`) leaves a member's score as it is.
    public static func zadd(_ key: String, score: String, member: String, onlyIfAbsent: Bool = false) -> RedisCommand {
        RedisCommand("ZADD", keys: [key], arguments: (onlyIfAbsent ? ["NX"] : []) + [score, member])
    }

    public static func zrem(_ key: String, _ members: [String]) -> RedisCommand {
        RedisCommand("ZREM", keys: [key], arguments: members)
    }

    public static func zrank(_ key: String, _ member: String) -> RedisCommand {
        RedisCommand("ZRANK", keys: [key], arguments: [member], isReadOnly: true)
    }

    /// The member's rank counted from the highest score.
    public static func zrevrank(_ key: String, _ member: String) -> RedisCommand {
        RedisCommand("ZREVRANK", keys: [key], arguments: [member], isReadOnly: true)
    }

    /// Members by rank from `start` to `stop` (negative counts from the end), with their
    /// scores after each when `withScores`; highest score first when `reversed` (`REV`).
    public static func zrange(_ key: String, _ start: Int, _ stop: Int, withScores: Bool = false, reversed: Bool = false) -> RedisCommand {
        RedisCommand(
            "ZRANGE", keys: [key],
            arguments: [String(start), String(stop)] + (reversed ? ["REV"] : []) + (withScores ? ["WITHSCORES"] : []), isReadOnly: true
        )
    }
}
