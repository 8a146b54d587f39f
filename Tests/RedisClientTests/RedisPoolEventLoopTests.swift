import NIOCore
import NIOPosix
import RedisClient
import Synchronization
import Testing
import TestSupport

/// `RedisConnectionPool.run(_:on:)`: scripts run from an event loop with their reply on a
/// future, as a proxied request's rate-limit check does.
@Suite("Redis scripts on an event loop against a real redis-server", .realProcesses)
struct RedisPoolEventLoopTests {
    private static let counter = RedisScript(name: "count", source: "return redis.call('INCR', KEYS[1])", waitsForReplicas: false)

    private func pool(_ server: RedisServer, size: Int = 4) throws -> RedisConnectionPool {
        RedisConnectionPool(configuration: RedisConfiguration(url: try RedisURL(server.url), poolSize: size, timeout: .seconds(5)))
    }

    @Test func theReplyCompletesOnTheCallersLoop() async throws {
        let server = try await RedisServer()
        let redis = try pool(server)
        defer { redis.shutdown() }
        let call = try RedisScriptCall(Self.counter, keys: ["{n}"], arguments: [])
        let loop = MultiThreadedEventLoopGroup.singleton.next()
        // The first calls find no connection yet and go the asynchronous way; the later ones
        // find one ready on this loop. Every one counts once and answers on the loop.
        for expected in Int64(1)...5 {
            let (reply, onLoop) = try await loop.flatSubmit {
                redis.run(call, on: loop).map { ($0, loop.inEventLoop) }
            }.get()
            #expect(reply == .integer(expected))
            #expect(onLoop)
        }
    }

    /// 200 calls made in one loop tick: each gets its own reply, none lost or swapped.
    @Test func callsMadeTogetherEachGetTheirOwnReply() async throws {
        let server = try await RedisServer()
        let redis = try pool(server, size: 1)
        defer { redis.shutdown() }
        let call = try RedisScriptCall(Self.counter, keys: ["{together}"], arguments: [])
        let loop = MultiThreadedEventLoopGroup.singleton.next()
        _ = try await loop.flatSubmit { redis.run(call, on: loop) }.get()
        let replies = try await loop.flatSubmit {
            EventLoopFuture.whenAllSucceed((0..<200).map { _ in redis.run(call, on: loop) }, on: loop)
        }.get()
        #expect(replies == (2...201).map { RedisValue.integer(Int64($0)) })
    }

    /// A prepared call with its last argument replaced runs as one built with that argument,
    /// on the loop and (after `SCRIPT FLUSH`) through the asynchronous fallback, which sends
    /// the call's arguments rather than its bytes; the prepared call itself is unchanged.
    @Test(arguments: ["7", "12345678901", ""])
    func aReplacedLastArgumentIsTheOneSent(argument: String) async throws {
        let server = try await RedisServer()
        let redis = try pool(server, size: 1)
        defer { redis.shutdown() }
        let echo = RedisScript(name: "echo", source: "return {KEYS[1], ARGV[1], ARGV[2]}", waitsForReplicas: false)
        let prepared = try RedisScriptCall(echo, keys: ["{echo}"], arguments: ["first", "1"])
        let replaced = prepared.replacingLastArgument(with: argument)
        #expect(replaced.arguments == [Array("first".utf8), Array(argument.utf8)])
        let loop = MultiThreadedEventLoopGroup.singleton.next()
        func strings(_ call: RedisScriptCall) async throws -> [String?]? {
            try await loop.flatSubmit { redis.run(call, on: loop) }.get().array?.map(\.string)
        }
        for _ in 0..<3 {
            #expect(try await strings(replaced) == ["{echo}", "first", argument])
        }
        _ = try await server.cli("SCRIPT", "FLUSH")
        #expect(try await strings(replaced) == ["{echo}", "first", argument])
        #expect(try await strings(prepared) == ["{echo}", "first", "1"])
    }

    @Test func aScriptRedisLostIsSentAgain() async throws {
        let server = try await RedisServer()
        let redis = try pool(server, size: 1)
        defer { redis.shutdown() }
        let call = try RedisScriptCall(Self.counter, keys: ["{flushed}"], arguments: [])
        let loop = MultiThreadedEventLoopGroup.singleton.next()
        #expect(try await loop.flatSubmit { redis.run(call, on: loop) }.get() == .integer(1))
        _ = try await server.cli("SCRIPT", "FLUSH")
        #expect(try await loop.flatSubmit { redis.run(call, on: loop) }.get() == .integer(2))
    }

    /// A single command that asks for `redis.wait_replicas` is held to it as a script is: on
    /// a Redis without replicas, WAIT's zero confirmations fail the call; without the setting
    /// its reply is the command's own.
    @Test func aCommandWaitingForReplicasFailsWithoutThem() async throws {
        let server = try await RedisServer()
        let durable = RedisConnectionPool(
            // WAIT is given half the command timeout: 2 s leaves its reply a second on a machine
            // busy with builds (400 ms was once too little).
            configuration: RedisConfiguration(url: try RedisURL(server.url), poolSize: 1, timeout: .seconds(2), waitReplicas: 1)
        )
        defer { durable.shutdown() }
        let loop = MultiThreadedEventLoopGroup.singleton.next()
        // Connected first, so the timed call is the write and its WAIT alone.
        _ = try await loop.flatSubmit { durable.run(.get("{w}"), waitsForReplicas: false, on: loop) }.get()
        do {
            _ = try await loop.flatSubmit { durable.run(.set("{w}", "x"), waitsForReplicas: true, on: loop) }.get()
            Issue.record("a write no replica confirmed must fail")
        } catch let error as RedisError {
            #expect(error.isTimeout && error.detail.contains("0 of 1 replicas confirmed SET"), "\(error)")
        }
        let reply = try await loop.flatSubmit { durable.run(.get("{w}"), waitsForReplicas: false, on: loop) }.get()
        #expect(reply == .bulkString(Array("x".utf8)), "the write happened on the primary")
    }

    /// The two native steps of an `Idempotency-Key` record: `SET … NX GET` takes an absent key
    /// and leaves a present one, `SET … XX GET` replaces a present one with a binary value and
    /// leaves an absent one absent; each replies with what the key held.
    @Test func settingIfAbsentAndReplacingReplyWithWhatWasThere() async throws {
        let server = try await RedisServer()
        let redis = try pool(server, size: 1)
        defer { redis.shutdown() }
        let loop = MultiThreadedEventLoopGroup.singleton.next()
        func run(_ command: RedisCommand) async throws -> RedisValue {
            try await loop.flatSubmit { redis.run(command, waitsForReplicas: false, on: loop) }.get()
        }
        let sealed: [UInt8] = [0x44, 0x0D, 0x0A, 0x00, 0xFF]
        #expect(try await run(.replaceGettingOld("{r}", sealed, expiry: .seconds(5))) == .null)
        #expect(try await run(.get("{r}")) == .null, "an absent key is not created")
        #expect(try await run(.setIfAbsentGettingOld("{r}", "lock", expiry: .seconds(5))) == .null)
        #expect(try await run(.setIfAbsentGettingOld("{r}", "other", expiry: .seconds(5))) == .bulkString(Array("lock".utf8)))
        #expect(try await run(.replaceGettingOld("{r}", sealed, expiry: .seconds(60))) == .bulkString(Array("lock".utf8)))
        #expect(try await run(.get("{r}")) == .bulkString(sealed))
        let ttl = try await run(.pttl("{r}")).int ?? 0
        #expect(ttl > 5_000 && ttl <= 60_000, "the expiry is the stored answer's, not the lock's: \(ttl)")
    }

    @Test func anErrorReplyFailsTheFuture() async throws {
        let server = try await RedisServer()
        let redis = try pool(server, size: 1)
        defer { redis.shutdown() }
        let failing = RedisScript(name: "fails", source: "return redis.error_reply('ERR no such thing')", waitsForReplicas: false)
        let call = try RedisScriptCall(failing, keys: ["{e}"], arguments: [])
        let loop = MultiThreadedEventLoopGroup.singleton.next()
        for _ in 0..<2 {
            do {
                _ = try await loop.flatSubmit { redis.run(call, on: loop) }.get()
                Issue.record("an error reply must fail the future")
            } catch let error as RedisError {
                #expect(error.isServer && error.detail.contains("no such thing"))
            }
        }
        // The connection is still good after it.
        #expect(try await redis.send(.ping()) == .simpleString("PONG"))
    }

    @Test func aStoppedRedisFailsTheFuture() async throws {
        let server = try await RedisServer()
        let redis = RedisConnectionPool(configuration: RedisConfiguration(url: try RedisURL(server.url), poolSize: 1, timeout: .seconds(2)))
        defer { redis.shutdown() }
        let call = try RedisScriptCall(Self.counter, keys: ["{down}"], arguments: [])
        let loop = MultiThreadedEventLoopGroup.singleton.next()
        _ = try await loop.flatSubmit { redis.run(call, on: loop) }.get()
        await server.stop()
        await #expect(throws: RedisError.self) {
            _ = try await loop.flatSubmit { redis.run(call, on: loop) }.get()
        }
    }
}
