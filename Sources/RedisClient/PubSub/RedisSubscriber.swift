import Logging
import NIOCore
import NIOPosix
import ServiceLifecycle
import Synchronization

/// Listens on Redis pub/sub channels for as long as the service runs, reconnecting by itself.
///
/// Used for cache invalidation: a message means "drop what you cached about X". Whenever Redis
/// confirms the subscription (first and after every reconnect), and whenever it is found
/// broken, `onReset` runs, because
/// messages published while it was down are lost and every cache must start over. A heartbeat
/// `PING` every `heartbeat` finds a connection that died silently within about that time.
/// `onHealth` hears each change: true once Redis confirmed the subscription, false when it is
/// lost or cannot be made (what the gateway's readiness follows, with no call of its own).
public final class RedisSubscriber: Service, Sendable {
    public typealias MessageHandler = @Sendable (_ channel: String, _ payload: String) -> Void

    private let configuration: RedisConfiguration
    private let channels: [String]
    private let heartbeat: Duration
    private let onMessage: MessageHandler
    private let onReset: @Sendable () -> Void
    private let onHealth: (@Sendable (_ subscribed: Bool) -> Void)?
    private let eventLoop: any EventLoop
    private let logger: Logger

    public init(
        configuration: RedisConfiguration,
        channels: [String],
        heartbeat: Duration = .milliseconds(500),
        eventLoopGroup: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton,
        logger: Logger = Logger(label: "redis-subscriber"),
        onHealth: (@Sendable (_ subscribed: Bool) -> Void)? = nil,
        onReset: @escaping @Sendable () -> Void,
        onMessage: @escaping MessageHandler
    ) {
        self.configuration = configuration
        self.channels = channels
        self.heartbeat = heartbeat
        self.onMessage = onMessage
        self.onReset = onReset
        self.onHealth = onHealth
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
            // Shutting down: nothing will read the caches again, so nothing to reset.
            if Task.isCancelled { break }
            onHealth?(false)
            onReset()
            try? await Task.sleep(for: configuration.reconnectBackoff)
        }
    }

    /// One connection's life: subscribe, deliver messages, return when it breaks.
    ///
    /// The caches are cleared only once Redis has confirmed the subscription to every channel,
    /// not when `SUBSCRIBE` is written: an invalidation published between the two would reach
    /// nobody, and whatever a cache took in meanwhile would stay until its own expiry.
    private func subscribeOnce() async throws {
        let pongs = PongCounter()
        let onMessage = self.onMessage
        let confirmed = eventLoop.makePromise(of: Void.self)
        let channelCount = channels.count
        let connection: RedisConnection
        do {
            connection = try await RedisConnection.connect(
                using: configuration,
                on: eventLoop,
                timeout: configuration.timeout
            ) { value in
                guard let parts = value.array, let kind = parts.first?.string else { return }
                switch kind {
                case "message" where parts.count == 3:
                    if let channel = parts[1].string, let payload = parts[2].string {
                        onMessage(channel, payload)
                    }
                case "subscribe" where parts.count == 3:
                    // The third element counts this connection's subscriptions so far.
                    if parts[2].int == Int64(channelCount) { confirmed.succeed() }
                case "pong":
                    pongs.received()
                default:
                    break
                }
            }
        } catch {
            confirmed.fail(error)
            throw error
        }
        // A connection that dies, or a Redis that does not confirm in time, fails the wait
        // (completing a promise twice is a no-op, so these never race a confirmation).
        connection.channel.closeFuture.whenComplete { _ in
            confirmed.fail(RedisError.connection("subscription connection closed"))
        }
        let overdue = eventLoop.scheduleTask(in: TimeAmount(configuration.timeout)) {
            confirmed.fail(RedisError.timeout("SUBSCRIBE was not confirmed"))
        }
        defer {
            overdue.cancel()
            connection.close()
        }
        connection.write(.subscribe(channels))
        try await confirmed.futureResult.get()
        // Caches may hold entries invalidated while no subscription existed.
        onReset()
        onHealth?(true)
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
                    connection.write(.ping())
                    sent += 1
                }
            }
            // Closing here, before the group waits for its tasks, ends the one awaiting the
            // close; closing after the group would wait forever.
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
