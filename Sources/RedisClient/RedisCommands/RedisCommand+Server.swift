import GatewayPrimitives

/// Keyless server commands: `PING`, `INFO`, `CONFIG GET`, `WAIT`.
extension RedisCommand {
    public static func ping() -> RedisCommand {
        RedisCommand("PING", isReadOnly: true)
    }

    /// One section of `INFO` (`memory`, `replication`).
    public static func info(_ section: String) -> RedisCommand {
        RedisCommand("INFO", arguments: [section], isReadOnly: true)
    }

    public static func configGet(_ parameter: String) -> RedisCommand {
        RedisCommand("CONFIG", arguments: ["GET", parameter], isReadOnly: true)
    }

    /// Blocks until `replicas` replicas confirmed this connection's writes, or `timeout`.
    public static func wait(replicas: Int, timeout: Duration) -> RedisCommand {
        RedisCommand("WAIT", arguments: [String(replicas), String(max(1, timeout.inMilliseconds))])
    }
}
