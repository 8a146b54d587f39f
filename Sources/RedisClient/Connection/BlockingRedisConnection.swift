internal import CHiredis
import GatewayPrimitives
import NIOPosix
import Synchronization

/// A synchronous hiredis connection (`redisConnectWithTimeout` + `redisCommandArgv`).
///
/// Not used by the gateway: it is the road not taken, kept so `redis-bench --client blocking`
/// can measure it against the pipelined ``RedisConnectionPool`` (see docs/DECISIONS.md).
/// Each call blocks its thread for a whole round trip, so it must only run on a thread pool
/// (``BlockingRedisConnection/send(_:on:)``), never on an event loop.
///
/// `@unchecked Sendable`: the `redisContext` is not thread-safe, so every use is serialised
/// by `lock`; the pointer itself never escapes this class.
public final class BlockingRedisConnection: @unchecked Sendable {
    private let context: UnsafeMutablePointer<redisContext>
    private let lock = Mutex(())

    public init(url: RedisURL, timeout: Duration) throws(RedisError) {
        // hiredis 0.14 as Debian builds it has no TLS; the pooled client does (``RedisTLS``).
        guard !url.usesTLS else { throw .tls("the blocking client cannot do TLS; use the pool client") }
        let milliseconds = Int(timeout.inMilliseconds)
        let context = redisConnectWithTimeout(url.host, Int32(url.port), chiredis_timeval_ms(milliseconds))
        guard let context, chiredis_context_err(context) == 0 else {
            let message = String(cString: chiredis_context_errstr(context))
            if let context { redisFree(context) }
            throw .connection(message)
        }
        _ = redisSetTimeout(context, chiredis_timeval_ms(milliseconds))
        self.context = context
        for command in url.handshakeCommands {
            _ = try sendBlocking(command).throwingServerError()
        }
    }

    deinit {
        redisFree(context)
    }

    /// Runs the command on `pool`'s threads and waits without blocking the caller.
    public func send(_ command: RedisCommand, on pool: NIOThreadPool) async throws -> RedisValue {
        try await pool.runIfActive { try self.sendBlocking(command).throwingServerError() }
    }

    /// Blocks the calling thread for one round trip.
    public func sendBlocking(_ command: RedisCommand) throws(RedisError) -> RedisValue {
        try lock.withLock { _ throws(RedisError) -> RedisValue in
            let raw = command.arguments.withCStringArrays { argv, lengths in
                redisCommandArgv(context, Int32(argv.count), argv.baseAddress, lengths.baseAddress)
            }
            guard let raw else {
                throw .connection(String(cString: chiredis_context_errstr(context)))
            }
            defer { freeReplyObject(raw) }
            return Hiredis.value(of: raw.assumingMemoryBound(to: redisReply.self))
        }
    }
}
