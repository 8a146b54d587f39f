import Logging
import NIOCore
import NIOPosix
import ServiceLifecycle
import Synchronization

/// Listens on Redis pub/sub channels for as long as the service runs, reconnecting by itself.
///
/// Used for cache invalidation: a message means "drop what you cached about X". Whenever the
/// subscription is (re)established, and whenever it is found broken, `onReset` runs, because
/// messages published while it was down are lost and every cache must start over. A heartbeat
/// `PING` every `heartbeat` finds a connection that died silently within about that time.
public final class RedisSubscriber: Service, Sendable {
    public typealias MessageHandler = @Sendable (_ channel: String, _ payload: String) -> Void

    private let configuration: RedisConfiguration
    private let channels: [String]
    private let heartbeat: Duration
    private let onMessage: MessageHandler
    private let onReset: @Sendable () -> Void
    private let eventLoop: any EventLoop
    private let logger: Logger

    public init(
        configuration: RedisConfiguration,
        channels: [String],
        heartbeat: Duration = .milliseconds(500),
        eventLoopGroup: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton,
        logger: Logger = Logger(label: "redis-subscriber"),
        onReset: @escaping @Sendable () -> Void,
        onMessage: @escaping MessageHandler
    ) {
        self.configuration = configuration
        self.channels = channels
        self.heartbeat = heartbeat
        self.onMessage = onMessage
        self.onReset = onReset
        self.eventLoop = eventLoopGroup.next()
        self.logger = logger
    }

    /// Runs until graceful shutdown (or cancellation), which closes the subscription.
    public func run() async throws {
        try await cancelWhenGracefulShutdown {
            await self.subscribeUntilCancelled()
        }
    }

    private func subscribeUntilCancelled() async {
        while !Task.isCancelled {
            do {
                try await subscribeOnce()
            } catch {
                logger.debug("subscription lost", metadata: ["error": "\(error)"])
            }
            onReset()
            try? await Task.sleep(for: configuration.reconnectBackoff)
        }
    }

    /// One connection's life: subscribe, deliver messages, return when it breaks.
    private func subscribeOnce() async throws {
        let pongs = PongCounter()
        let onMessage = self.onMessage
        let connection = try await RedisConnection.connect(
            to: configuration.url,
            tls: configuration.tls,
            on: eventLoop,
            timeout: configuration.timeout
        ) { value in
            guard let parts = value.array, let kind = parts.first?.string else { return }
            switch kind {
            case "message" where parts.count == 3:
                if let channel = parts[1].string, let payload = parts[2].string {
                    onMessage(channel, payload)
                }
            case "pong":
                pongs.received()
            default:
                break
            }
        }
        try connection.write(RedisCommand("SUBSCRIBE", channels))
        // Caches may hold entries invalidated while no subscription existed.
        onReset()
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                await connection.closed()
                throw RedisError.connection("subscription connection closed")
            }
            group.addTask { [heartbeat] in
                var sent = 0
                while true {
                    try await Task.sleep(for: heartbeat)
                    guard pongs.count >= sent else { throw RedisError.timeout("no pong from redis") }
                    try connection.write(RedisCommand("PING"))
                    sent += 1
                }
            }
            defer { connection.close() }
            try await group.next()
        }
    }
}

/// How many heartbeat pongs have arrived (written on the event loop, read by the heartbeat).
private final class PongCounter: Sendable {
    private let value = Mutex(0)
    func received() { value.withLock { $0 += 1 } }
    var count: Int { value.withLock { $0 } }
}
