import Logging
import NIOCore
import NIOPosix
import ServiceLifecycle

/// Follows `+switch-master` on every sentinel, so a failover moves the gateway to the new
/// primary at once rather than when the old one's connections break.
///
/// One subscription per sentinel (each a ``RedisSubscriber``, reconnecting by itself): any
/// one of them is enough, and a sentinel that is down costs nothing but its own retries.
public final class RedisSentinelWatcher: Service, Sendable {
    private let subscribers: [RedisSubscriber]

    public init(configuration: RedisConfiguration, sentinel: RedisSentinel, logger: Logger = Logger(label: "redis-sentinel")) {
        subscribers = sentinel.nodes.map { node in
            var direct = configuration
            direct.url = RedisURL(host: node.host, port: node.port, password: sentinel.password, usesTLS: configuration.url.usesTLS)
            direct.sentinel = nil
            return RedisSubscriber(
                configuration: direct,
                channels: ["+switch-master"],
                logger: logger,
                onReset: {},
                onMessage: { _, payload in
                    // "<master name> <old ip> <old port> <new ip> <new port>"
                    let fields = payload.split(separator: " ").map(String.init)
                    guard fields.count == 5, fields[0] == sentinel.masterName, let port = Int(fields[4]) else { return }
                    logger.warning("redis primary moved", metadata: ["from": "\(fields[1]):\(fields[2])", "to": "\(fields[3]):\(port)"])
                    sentinel.switched(to: RedisSentinel.Node(host: fields[3], port: port))
                }
            )
        }
    }

    public func run() async throws {
        try await withThrowingTaskGroup(of: Void.self) { group in
            for subscriber in subscribers {
                group.addTask { try await subscriber.run() }
            }
            try await group.waitForAll()
        }
    }
}
