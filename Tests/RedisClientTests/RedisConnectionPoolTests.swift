import Foundation
import RedisClient
import Testing
import TestSupport

@Suite("Redis connection pool against a real redis-server", .timingSensitive)
struct RedisConnectionPoolTests {
    /// The default timeout is long enough that a reply slowed by parallel suites on a busy
    /// machine is not a failure; tests of timeouts set their own.
    private func pool(_ server: RedisServer, size: Int = 4, timeout: Duration = .seconds(5)) throws -> RedisConnectionPool {
        RedisConnectionPool(configuration: RedisConfiguration(url: try RedisURL(server.url), poolSize: size, timeout: timeout))
    }

    @Test func typedReplies() async throws {
        let server = try await RedisServer()
        let redis = try pool(server)
        defer { redis.shutdown() }

        #expect(try await redis.send(.ping()) == .simpleString("PONG"))
        #expect(try await redis.send(.set("k", "v")) == .simpleString("OK"))
        #expect(try await redis.send(.get("k")) == .bulkString(Array("v".utf8)))
        #expect(try await redis.send(.get("missing")) == .null)
        #expect(try await redis.send(RedisCommand("INCRBY", keys: ["n"], arguments: ["41"])) == .integer(41))
        #expect(try await redis.send(RedisCommand("RPUSH", keys: ["l"], arguments: ["a", "b"])) == .integer(2))
        #expect(try await redis.send(RedisCommand("LRANGE", keys: ["l"], arguments: ["0", "-1"])) == .array([.bulkString([97]), .bulkString([98])]))
        #expect(try await redis.send(.get("k")).string == "v")
        #expect(try await redis.send(.get("n")).int == 41)
    }

    @Test func binarySafeArguments() async throws {
        let server = try await RedisServer()
        let redis = try pool(server)
        defer { redis.shutdown() }
        let value: [UInt8] = [0, 13, 10, 255, 36, 42, 0]
        _ = try await redis.send(RedisCommand(bytes: [Array("SET".utf8), [0, 1], value]))
        #expect(try await redis.send(RedisCommand(bytes: [Array("GET".utf8), [0, 1]])) == .bulkString(value))
    }

    @Test func serverErrorsAreTyped() async throws {
        let server = try await RedisServer()
        let redis = try pool(server)
        defer { redis.shutdown() }
        _ = try await redis.send(.set("s", "text"))
        do {
            _ = try await redis.send(RedisCommand("INCR", keys: ["s"]))
            Issue.record("INCR on text must fail")
        } catch let error as RedisError {
            #expect(error.isServer)
            #expect(error.detail.hasPrefix("ERR"))
        }
        // The connection is still good after an error reply.
        #expect(try await redis.send(.ping()) == .simpleString("PONG"))
    }

    @Test func pipelineReturnsEveryReplyInOrder() async throws {
        let server = try await RedisServer()
        let redis = try pool(server)
        defer { redis.shutdown() }
        let replies = try await redis.pipeline([
            .set("a", "1"),
            RedisCommand("INCR", keys: ["a"]),
            .hset("a", ["f", "v"]),
            .get("a"),
        ])
        #expect(replies.count == 4)
        #expect(replies[0] == .simpleString("OK"))
        #expect(replies[1] == .integer(2))
        guard case .error(let message) = replies[2] else {
            Issue.record("expected WRONGTYPE, got \(replies[2])")
            return
        }
        #expect(message.hasPrefix("WRONGTYPE"))
        #expect(replies[3].string == "2")
    }

    @Test func transactionIsAtomic() async throws {
        let server = try await RedisServer()
        let redis = try pool(server)
        defer { redis.shutdown() }
        let results = try await redis.transaction([
            .set("t", "10"),
            RedisCommand("INCRBY", keys: ["t"], arguments: ["5"]),
            .get("t"),
        ])
        #expect(results == [.simpleString("OK"), .integer(15), .bulkString(Array("15".utf8))])
        // A command Redis refuses while queueing aborts the whole transaction.
        await #expect(throws: RedisError.self) {
            _ = try await redis.transaction([.set("t", "0"), RedisCommand("NOSUCHCOMMAND")])
        }
        #expect(try await redis.send(.get("t")).string == "15")
    }

    @Test func concurrentCallersShareConnections() async throws {
        let server = try await RedisServer()
        let redis = try pool(server, size: 2)
        defer { redis.shutdown() }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<1000 {
                group.addTask { _ = try await redis.send(RedisCommand("INCR", keys: ["counter"])) }
            }
            try await group.waitForAll()
        }
        #expect(try await redis.send(.get("counter")).int == 1000)
        #expect(try await server.cli("CLIENT", "LIST").split(separator: "\n").count <= 3)
    }

    @Test func scriptsRunByShaAndSurviveScriptFlush() async throws {
        let server = try await RedisServer()
        let redis = try pool(server)
        defer { redis.shutdown() }
        let script = RedisScript(name: "add", source: "return redis.call('INCRBY', KEYS[1], ARGV[1])")
        #expect(try await redis.run(script, keys: ["s"], arguments: ["2"]) == .integer(2))
        #expect(try await server.cli("SCRIPT", "EXISTS", script.sha1) == "1")
        #expect(try await redis.run(script, keys: ["s"], arguments: ["3"]) == .integer(5))

        try await server.cli("SCRIPT", "FLUSH")
        #expect(try await server.cli("SCRIPT", "EXISTS", script.sha1) == "0")
        #expect(try await redis.run(script, keys: ["s"], arguments: ["1"]) == .integer(6))
        #expect(try await server.cli("SCRIPT", "EXISTS", script.sha1) == "1")
    }

    @Test func reconnectsAfterRedisRestarts() async throws {
        let server = try await RedisServer(appendOnly: true)
        let redis = try pool(server, size: 2, timeout: .seconds(1))
        defer { redis.shutdown() }
        let script = RedisScript(name: "get", source: "return redis.call('GET', KEYS[1])")
        // Warm up: under a loaded parallel test run the first connection can take a while.
        try await eventually(timeout: .seconds(5)) { (try? await redis.send(.set("durable", "yes"))) != nil }
        #expect(try await redis.run(script, keys: ["durable"], arguments: []).string == "yes")

        await server.stop()
        // While it is down every command fails fast with a connection error (well inside the
        // 1 s timeout), never hangs.
        let clock = ContinuousClock()
        let started = clock.now
        await #expect(throws: RedisError.self) { _ = try await redis.send(.get("durable")) }
        #expect(clock.now - started < .milliseconds(500))

        try await server.start()
        // Same pool, no restart of ours: it dials again by itself. The restarted Redis has an
        // empty script cache, so the script goes through the NOSCRIPT fallback.
        try await eventually(timeout: .seconds(2)) { try await redis.send(.ping()) == .simpleString("PONG") }
        #expect(try await redis.send(.get("durable")).string == "yes")
        #expect(try await redis.run(script, keys: ["durable"], arguments: []).string == "yes")
    }

    @Test func startsBeforeRedisAndConnectsWhenItArrives() async throws {
        let server = try await RedisServer()
        await server.stop()
        let redis = try pool(server)
        defer { redis.shutdown() }
        await #expect(throws: RedisError.self) { try await redis.ping() }
        try await server.start()
        try await eventually(timeout: .seconds(2)) { (try? await redis.ping()) != nil }
    }

    @Test func commandsTimeOutWhenRedisStopsAnswering() async throws {
        let server = try await RedisServer()
        let redis = try pool(server, size: 1, timeout: .milliseconds(200))
        defer { redis.shutdown() }
        try await eventually(timeout: .seconds(5)) { (try? await redis.ping()) != nil }
        try await server.cli("CLIENT", "PAUSE", "1500", "ALL")
        let clock = ContinuousClock()
        let started = clock.now
        do {
            _ = try await redis.send(.get("x"))
            Issue.record("a paused Redis must not answer")
        } catch let error as RedisError {
            #expect(error.isTimeout)
        }
        let waited = clock.now - started
        #expect(waited >= .milliseconds(200))
        // At its deadline, not a tick later; the margin covers a loaded parallel test run.
        #expect(waited < .milliseconds(400), "timed out after \(waited)")
        // Once the pause ends, the pool works again.
        try await eventually(timeout: .seconds(3)) { (try? await redis.ping()) != nil }
    }

    @Test func passwordAndDatabaseFromTheURL() async throws {
        let server = try await RedisServer(extraArguments: ["--requirepass", "s3cret"])
        let url = try RedisURL("redis://:s3cret@127.0.0.1:\(server.port)/3")
        let redis = RedisConnectionPool(configuration: RedisConfiguration(url: url, poolSize: 1, timeout: .seconds(2)))
        defer { redis.shutdown() }
        _ = try await redis.send(.set("in-db-3", "yes"))
        #expect(try await server.cli("-a", "s3cret", "--no-auth-warning", "-n", "3", "GET", "in-db-3") == "yes")

        let wrong = RedisConnectionPool(configuration: RedisConfiguration(
            url: try RedisURL("redis://:nope@127.0.0.1:\(server.port)/0"), poolSize: 1, timeout: .seconds(2)))
        defer { wrong.shutdown() }
        await #expect(throws: RedisError.self) { try await wrong.ping() }
    }

    @Test func shutdownFailsLaterCommands() async throws {
        let server = try await RedisServer()
        let redis = try pool(server)
        try await redis.ping()
        redis.shutdown()
        await #expect(throws: RedisError.poolClosed) { try await redis.ping() }
    }

    /// A command still waiting for its reply when the pool shuts down fails as `poolClosed`,
    /// which callers treat as the process stopping, not as Redis hanging up.
    @Test func shutdownFailsCommandsInFlightAsPoolClosed() async throws {
        let server = try await RedisServer()
        let redis = try pool(server, size: 1)
        try await redis.ping()
        let waiting = Task { try await redis.send(RedisCommand("BLPOP", keys: ["never-pushed"], arguments: ["0"])) }
        try await eventually(timeout: .seconds(5)) { try await server.cli("CLIENT", "LIST").contains("cmd=blpop") }
        redis.shutdown()
        await #expect(throws: RedisError.poolClosed) { try await waiting.value }
    }
}
