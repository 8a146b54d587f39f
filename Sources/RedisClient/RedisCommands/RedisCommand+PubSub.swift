/// Pub/sub: `PUBLISH`, and `SUBSCRIBE` (whose replies arrive as pushes, ``RedisSubscriber``).
extension RedisCommand {
    /// Reaches every subscriber of `channel`, on every node of a cluster.
    public static func publish(_ channel: String, _ message: String) -> RedisCommand {
        RedisCommand("PUBLISH", arguments: [channel, message])
    }

    static func subscribe(_ channels: [String]) -> RedisCommand {
        RedisCommand("SUBSCRIBE", arguments: channels)
    }
}
