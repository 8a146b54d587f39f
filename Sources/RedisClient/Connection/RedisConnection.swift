import NIOCore
import NIOPosix
import Synchronization

/// One TCP connection to Redis, shared by many concurrent callers through pipelining.
///
/// Callers on any thread hand their encoded commands to an outbox; the first one to find it
/// empty schedules a single drain on the connection's event loop, so commands that arrive
/// together are written with one flush and no caller ever blocks a thread.
public final class RedisConnection: Sendable {
    private struct Outbox: ~Copyable {
        var requests: [RedisPendingRequest] = []
        var drainScheduled = false
    }

    let channel: any Channel
    private let handler: NIOLoopBound<RedisChannelHandler>
    private let outbox = Mutex(Outbox())

    private init(channel: any Channel, handler: NIOLoopBound<RedisChannelHandler>) {
        self.channel = channel
        self.handler = handler
    }

    /// Whether the socket is still open; a closed connection fails every command at once.
    public var isActive: Bool { channel.isActive }

    public var eventLoop: any EventLoop { channel.eventLoop }

    /// Opens a connection to the configured Redis: the URL's, or with Sentinel the primary
    /// the sentinels name (forgotten again if it cannot be reached).
    static func connect(
        using configuration: RedisConfiguration,
        on eventLoop: any EventLoop,
        timeout: Duration,
        onPush: (@Sendable (RedisValue) -> Void)? = nil
    ) async throws -> RedisConnection {
        if let cluster = configuration.cluster {
            return try await connect(toAnyOf: cluster, using: configuration, on: eventLoop, timeout: timeout, onPush: onPush)
        }
        let flushInterval = configuration.flushInterval
        guard let sentinel = configuration.sentinel else {
            return try await connect(
                to: configuration.url, tls: configuration.tls, on: eventLoop, timeout: timeout, flushInterval: flushInterval, onPush: onPush
            )
        }
        let url = try await sentinel.primaryURL(for: configuration.url, tls: configuration.tls, on: eventLoop, timeout: timeout)
        do {
            return try await connect(to: url, tls: configuration.tls, on: eventLoop, timeout: timeout, flushInterval: flushInterval, onPush: onPush)
        } catch {
            sentinel.forgetPrimary()
            throw error
        }
    }

    /// A connection to the first cluster node that accepts one (known primaries, then seeds,
    /// from a different start each time): for whatever any node can answer, such as pub/sub
    /// (a `PUBLISH` reaches every node of a cluster).
    private static func connect(
        toAnyOf cluster: RedisCluster,
        using configuration: RedisConfiguration,
        on eventLoop: any EventLoop,
        timeout: Duration,
        onPush: (@Sendable (RedisValue) -> Void)?
    ) async throws -> RedisConnection {
        var failures: [String] = []
        for node in cluster.candidates() {
            do {
                return try await connect(
                    to: node.url(from: configuration.url), tls: configuration.tls, on: eventLoop, timeout: timeout,
                    flushInterval: configuration.flushInterval, onPush: onPush
                )
            } catch let error as RedisError where error.isTLS || error.isAuthentication {
                throw error
            } catch {
                failures.append("\(node): \(error)")
            }
        }
        throw RedisError.connection("no cluster node could be reached (\(failures.joined(separator: "; ")))")
    }

    /// Opens a connection (TLS first for `rediss://`) and runs the URL's `AUTH` and `SELECT`
    /// before handing it out.
    public static func connect(
        to url: RedisURL,
        tls: RedisTLS? = nil,
        on eventLoop: any EventLoop,
        timeout: Duration,
        flushInterval: Duration = .zero,
        onPush: (@Sendable (RedisValue) -> Void)? = nil
    ) async throws -> RedisConnection {
        let tls = url.usesTLS ? tls : nil
        if url.usesTLS, tls == nil {
            throw RedisError.tls("rediss:// but TLS could not be set up")
        }
        // Each channel's handler is kept by the initializer itself: looked up after `connect`,
        // it could already be gone from a channel that a failed TLS handshake closed, taking
        // the reason with it. Keyed by channel, since connecting to a name may try several
        // addresses, each with a channel of its own.
        let handlers = HandlersByChannel()
        let channel: any Channel
        do {
            channel = try await ClientBootstrap(group: eventLoop)
                .connectTimeout(TimeAmount(timeout))
                .channelOption(ChannelOptions.tcpOption(.tcp_nodelay), value: 1)
                .channelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        if let tls {
                            try channel.pipeline.syncOperations.addHandler(try tls.makeHandler(host: url.host))
                        }
                        let handler = RedisChannelHandler(flushInterval: flushInterval, onPush: onPush)
                        try channel.pipeline.syncOperations.addHandler(handler)
                        handlers.keep(NIOLoopBound(handler, eventLoop: channel.eventLoop), for: channel)
                    }
                }
                .connect(host: url.host, port: url.port)
                .get()
        } catch where RedisTLS.isTLSError(error) {
            throw RedisError.tls("\(url.host):\(url.port): \(RedisTLS.describe(error))")
        } catch {
            throw RedisError.connection("cannot connect to \(url.host):\(url.port): \(error)")
        }
        guard let handler = handlers.take(for: channel) else {
            channel.close(promise: nil)
            throw RedisError.connection("cannot connect to \(url.host):\(url.port): no handler")
        }
        let connection = RedisConnection(channel: channel, handler: handler)
        // Over TLS a PING makes the handshake (and the certificate check) finish here, so a
        // refused certificate is this call's error rather than the first command's.
        let handshake = url.handshakeCommands + (tls == nil ? [] : [.ping()])
        if !handshake.isEmpty {
            do {
                let replies = try await connection.pipeline(handshake, deadline: .now() + TimeAmount(timeout))
                for reply in replies { _ = try reply.throwingServerError() }
            } catch let error as RedisError where error.isTLS {
                connection.close()
                throw RedisError.tls("\(url.host):\(url.port): \(error.detail)")
            } catch {
                connection.close()
                throw error
            }
        }
        return connection
    }

    /// Sends one command; an error reply is thrown as ``RedisError/server(_:)``.
    public func send(_ command: RedisCommand, deadline: NIODeadline) async throws -> RedisValue {
        var payload = channel.allocator.buffer(capacity: 64)
        command.encode(into: &payload)
        let reply = try await withCheckedThrowingContinuation { continuation in
            enqueue(RedisPendingRequest(payload: payload, replyCount: 1, deadline: deadline, waiter: .single(continuation)))
        }
        return try reply.throwingServerError()
    }

    /// Sends `replyCount` commands already in RESP for a caller that waits on a future rather
    /// than in a task: `replied` gets the reply (several as one `.array`), error replies
    /// included, on this connection's loop. From that loop it is written at once and flushed
    /// once per loop tick.
    func send(
        formatted payload: ByteBuffer, replyCount: Int, deadline: NIODeadline,
        replied: @escaping @Sendable (Result<RedisValue, any Error>) -> Void
    ) {
        let request = RedisPendingRequest(payload: payload, replyCount: replyCount, deadline: deadline, waiter: .callback(replied))
        if channel.eventLoop.inEventLoop {
            handler.value.submitOnLoop(request)
        } else {
            enqueue(request)
        }
    }

    /// Sends every command in one write and returns every reply in order, error replies included.
    public func pipeline(_ commands: [RedisCommand], deadline: NIODeadline) async throws -> [RedisValue] {
        guard !commands.isEmpty else { return [] }
        var payload = channel.allocator.buffer(capacity: 64 * commands.count)
        for command in commands {
            command.encode(into: &payload)
        }
        return try await withCheckedThrowingContinuation { continuation in
            enqueue(RedisPendingRequest(payload: payload, replyCount: commands.count, deadline: deadline, waiter: .many(continuation)))
        }
    }

    /// Writes a command whose replies arrive as pushes (`SUBSCRIBE`, and `PING` in subscribe
    /// mode); only for connections opened with `onPush`.
    public func write(_ command: RedisCommand) {
        var payload = channel.allocator.buffer(capacity: 64)
        command.encode(into: &payload)
        channel.writeAndFlush(payload, promise: nil)
    }

    /// Completes when the connection has closed, for whatever reason.
    public func closed() async {
        try? await channel.closeFuture.get()
    }

    public func close() {
        channel.close(promise: nil)
    }

    /// Closes the connection; commands still waiting for a reply, and any queued behind
    /// them, fail with `error` rather than "connection closed by peer".
    func close(failing error: RedisError) {
        channel.eventLoop.execute { [handler] in handler.value.close(failing: error) }
    }

    private func enqueue(_ request: RedisPendingRequest) {
        let mustSchedule = outbox.withLock { box in
            box.requests.append(request)
            if box.drainScheduled { return false }
            box.drainScheduled = true
            return true
        }
        guard mustSchedule else { return }
        channel.eventLoop.execute { [self] in
            let requests = outbox.withLock { box in
                box.drainScheduled = false
                let taken = box.requests
                box.requests.removeAll(keepingCapacity: true)
                return taken
            }
            handler.value.submit(requests)
        }
    }
}

/// The Redis handler of each channel a connection attempt opened, until `connect` picks the
/// one that connected.
private final class HandlersByChannel: Sendable {
    private let handlers = Mutex<[ObjectIdentifier: NIOLoopBound<RedisChannelHandler>]>([:])

    func keep(_ handler: NIOLoopBound<RedisChannelHandler>, for channel: any Channel) {
        handlers.withLock { $0[ObjectIdentifier(channel)] = handler }
    }

    func take(for channel: any Channel) -> NIOLoopBound<RedisChannelHandler>? {
        handlers.withLock { $0.removeValue(forKey: ObjectIdentifier(channel)) }
    }
}
