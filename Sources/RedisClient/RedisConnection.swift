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

    /// Opens a connection and runs the URL's `AUTH` and `SELECT` before handing it out.
    public static func connect(
        to url: RedisURL,
        on eventLoop: any EventLoop,
        timeout: Duration,
        onPush: (@Sendable (RedisValue) -> Void)? = nil
    ) async throws -> RedisConnection {
        let channel: any Channel
        do {
            channel = try await ClientBootstrap(group: eventLoop)
                .connectTimeout(TimeAmount(timeout))
                .channelOption(ChannelOptions.socketOption(.tcp_nodelay), value: 1)
                .channelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.addHandler(RedisChannelHandler(onPush: onPush))
                    }
                }
                .connect(host: url.host, port: url.port)
                .get()
        } catch {
            throw RedisError.connection("cannot connect to \(url.host):\(url.port): \(error)")
        }
        let handler = try await channel.eventLoop.submit {
            NIOLoopBound(
                try channel.pipeline.syncOperations.handler(type: RedisChannelHandler.self),
                eventLoop: channel.eventLoop
            )
        }.get()
        let connection = RedisConnection(channel: channel, handler: handler)
        let handshake = url.handshakeCommands
        if !handshake.isEmpty {
            do {
                let replies = try await connection.pipeline(handshake, deadline: .now() + TimeAmount(timeout))
                for reply in replies { _ = try reply.throwingServerError() }
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
        try Hiredis.format(command, into: &payload)
        let reply = try await withCheckedThrowingContinuation { continuation in
            enqueue(RedisPendingRequest(payload: payload, replyCount: 1, deadline: deadline, waiter: .single(continuation)))
        }
        return try reply.throwingServerError()
    }

    /// Sends every command in one write and returns every reply in order, error replies included.
    public func pipeline(_ commands: [RedisCommand], deadline: NIODeadline) async throws -> [RedisValue] {
        guard !commands.isEmpty else { return [] }
        var payload = channel.allocator.buffer(capacity: 64 * commands.count)
        for command in commands {
            try Hiredis.format(command, into: &payload)
        }
        return try await withCheckedThrowingContinuation { continuation in
            enqueue(RedisPendingRequest(payload: payload, replyCount: commands.count, deadline: deadline, waiter: .many(continuation)))
        }
    }

    /// Writes a command whose replies arrive as pushes (`SUBSCRIBE`, and `PING` in subscribe
    /// mode); only for connections opened with `onPush`.
    public func write(_ command: RedisCommand) throws {
        var payload = channel.allocator.buffer(capacity: 64)
        try Hiredis.format(command, into: &payload)
        channel.writeAndFlush(payload, promise: nil)
    }

    /// Completes when the connection has closed, for whatever reason.
    public func closed() async {
        try? await channel.closeFuture.get()
    }

    public func close() {
        channel.close(promise: nil)
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
