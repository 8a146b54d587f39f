import Logging
import NIOCore

/// One Redis at the configured URL: no routing, and a refusal is always the response.
final class RedisStandalonePool: RedisSingleNodePool {
    let node: RedisNodePool

    init(configuration: RedisConfiguration, eventLoopGroup: any EventLoopGroup, logger: Logger, observer: RedisPoolObserver?) {
        node = RedisNodePool(configuration: configuration, eventLoopGroup: eventLoopGroup, logger: logger, observer: observer, onConnectionLost: {})
    }

    var mode: String { "standalone" }
    var primaryNames: [String] { ["\(node.address)"] }

    func reroute(after message: String, from node: RedisNodePool) -> RedisReroute? { nil }
}
