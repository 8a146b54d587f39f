/// `MULTI` and `EXEC`, which ``RedisConnectionPool/transaction(_:)`` wraps around its commands.
extension RedisCommand {
    static let multi = RedisCommand("MULTI")
    static let exec = RedisCommand("EXEC")
}
