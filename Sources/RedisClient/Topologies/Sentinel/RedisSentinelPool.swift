import Logging
import NIOCore

/// The primary the sentinels name (``RedisSentinel``): its connections dial whatever primary
/// is current, a lost connection makes the next dial ask the sentinels again, and `READONLY`
/// (the primary was demoted) moves to the new one.
final class RedisSentinelPool: RedisSingleNodePool {
    let node: RedisNodePool
    private let sentinel: RedisSentinel

    init(
        configuration: RedisConfiguration, sentinel: RedisSentinel, eventLoopGroup: any EventLoopGroup, logger: Logger,
        observer: RedisPoolObserver?
    ) {
        self.sentinel = sentinel
        // A primary that dropped us may be gone: ask the sentinels before redialling.
        node = RedisNodePool(
            configuration: configuration, eventLoopGroup: eventLoopGroup, logger: logger, observer: observer,
            onConnectionLost: { sentinel.forgetPrimary() }
        )
    }

    var mode: String { "sentinel" }
    var primaryNames: [String] { sentinel.currentPrimary.map { ["\($0)"] } ?? [] }

    /// A demoted primary refused the command without running it, so sending it once more,
    /// to the primary the sentinels name now, is safe.
    func reroute(after message: String, from node: RedisNodePool) -> RedisReroute? {
        guard message.hasPrefix("READONLY") else { return nil }
        sentinel.forgetPrimary()
        self.node.dropConnections()
        return .again
    }
}
