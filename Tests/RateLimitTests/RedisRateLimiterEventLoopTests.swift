import NIOCore
import NIOPosix
import RateLimit
import RedisClient
import Testing
import TestSupport

/// `RateLimiter.check(_:on:then:)`, the prepared check the proxy engine runs on its event loop.
@Suite("Token buckets checked from an event loop against a real redis-server", .realProcesses)
struct RedisRateLimiterEventLoopTests {
    private func limiter(_ server: RedisServer) throws -> (RedisRateLimiter, RedisConnectionPool) {
        let pool = RedisConnectionPool(configuration: RedisConfiguration(url: try RedisURL(server.url), poolSize: 4, timeout: .seconds(5)))
        return (RedisRateLimiter(redis: pool), pool)
    }

    /// One prepared check sent 200 times at once from one loop admits exactly its capacity.
    @Test(arguments: [1, 50])
    func aPreparedCheckAdmitsExactlyCapacity(capacity: Int) async throws {
        let server = try await RedisServer()
        let (limiter, pool) = try limiter(server)
        defer { pool.shutdown() }
        let check = limiter.prepare([RateLimitBucket(key: "loop:\(capacity)", limit: TokenBucket(capacity: capacity, refillPerSecond: 0.0001))])
        let loop = MultiThreadedEventLoopGroup.singleton.next()
        let decisions = try await loop.flatSubmit {
            EventLoopFuture.whenAllSucceed((0..<200).map { _ in limiter.check(check, on: loop) }, on: loop)
        }.get()
        #expect(decisions.filter(\.allowed).count == capacity)
        // Decided in the order they were made, each seeing the bucket the ones before it left.
        #expect(decisions.prefix(capacity).map(\.allowed) == Array(repeating: true, count: capacity))
        #expect(decisions.prefix(capacity).map { $0.buckets[0].remaining } == Array((0..<capacity).reversed()))
        #expect(decisions.filter { !$0.allowed }.allSatisfy { $0.buckets[0].remaining == 0 && $0.secondsUntilAllowed > 0 })
    }

    /// Checks prepared apart on the same buckets (two connections of one user) and made
    /// together in one tick go in one batch and stay exact: exactly `capacity` of them pass,
    /// the first ones made, each seeing what the ones before it left, on a loop of the Redis
    /// pool's group and on a loop outside it alike.
    @Test(arguments: [false, true])
    func checksPreparedApartOnTheSameBucketsAreDecidedInOrder(onAnotherGroupsLoop: Bool) async throws {
        let server = try await RedisServer()
        let (limiter, pool) = try limiter(server)
        defer { pool.shutdown() }
        let other = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        do {
            try await checkApart(server: server, limiter: limiter, onAnotherGroupsLoop ? other.next() : MultiThreadedEventLoopGroup.singleton.next())
        } catch {
            try? await other.shutdownGracefully()
            throw error
        }
        try await other.shutdownGracefully()
    }

    private func checkApart(server: RedisServer, limiter: RedisRateLimiter, _ loop: any EventLoop) async throws {
        let bucket = RateLimitBucket(key: "apart", limit: TokenBucket(capacity: 7, refillPerSecond: 0.0001))
        let connections = [limiter.prepare([bucket]), limiter.prepare([bucket]), limiter.prepare([bucket])]
        // A check of another bucket first, so the script is loaded and a connection is ready.
        let warmUp = limiter.prepare([RateLimitBucket(key: "apart-warm-up", limit: bucket.limit)])
        _ = try await loop.flatSubmit { limiter.check(warmUp, on: loop) }.get()
        _ = try await server.cli("CONFIG", "RESETSTAT")
        let decisions = try await loop.flatSubmit {
            EventLoopFuture.whenAllSucceed((0..<20).map { limiter.check(connections[$0 % 3], on: loop) }, on: loop)
        }.get()
        #expect(decisions.map(\.allowed) == Array(repeating: true, count: 7) + Array(repeating: false, count: 13))
        #expect(decisions.prefix(7).map { $0.buckets[0].remaining } == Array((0..<7).reversed()))
        #expect(decisions.suffix(13).allSatisfy { $0.buckets[0].remaining == 0 && $0.secondsUntilAllowed > 0 })
        #expect(try await server.cli("INFO", "commandstats").contains("cmdstat_evalsha:calls=1,"))
        let next = try await loop.flatSubmit { limiter.check(connections[0], on: loop) }.get()
        #expect(!next.allowed)
    }

    /// The same decisions, buckets and all, as the asynchronous check on the same buckets.
    @Test func severalBucketsDecideAsTheAsynchronousCheckDoes() async throws {
        let server = try await RedisServer()
        let (limiter, pool) = try limiter(server)
        defer { pool.shutdown() }
        let phone = RateLimitBucket(key: "loop-phone", limit: TokenBucket(capacity: 1, refillPerSecond: 0))
        let ip = RateLimitBucket(key: "loop-ip", limit: TokenBucket(capacity: 5, refillPerSecond: 0.0001))
        let check = limiter.prepare([phone, ip])
        let loop = MultiThreadedEventLoopGroup.singleton.next()
        let first = try await loop.flatSubmit { limiter.check(check, on: loop) }.get()
        #expect(first.allowed && first.buckets.map(\.remaining) == [0, 4])
        let refused = try await loop.flatSubmit { limiter.check(check, on: loop) }.get()
        #expect(!refused.allowed && refused.secondsUntilAllowed == .infinity && refused.buckets.map(\.remaining) == [0, 4])
        let asynchronous = try await limiter.check([phone, ip])
        #expect(!asynchronous.allowed && asynchronous.secondsUntilAllowed == .infinity)
        #expect(asynchronous.buckets.map(\.remaining) == refused.buckets.map(\.remaining))
        #expect(try await loop.flatSubmit { limiter.check(limiter.prepare([]), on: loop) }.get().allowed)
    }

    /// Checks of several buckets made together are all-or-nothing each: the one the tighter
    /// bucket refuses spends nothing from the other.
    @Test func checksMadeTogetherOnSeveralBucketsAreEachAllOrNothing() async throws {
        let server = try await RedisServer()
        let (limiter, pool) = try limiter(server)
        defer { pool.shutdown() }
        let phone = RateLimitBucket(key: "together-phone", limit: TokenBucket(capacity: 2, refillPerSecond: 0))
        let ip = RateLimitBucket(key: "together-ip", limit: TokenBucket(capacity: 5, refillPerSecond: 0.0001))
        let check = limiter.prepare([phone, ip])
        let loop = MultiThreadedEventLoopGroup.singleton.next()
        let decisions = try await loop.flatSubmit {
            EventLoopFuture.whenAllSucceed((0..<4).map { _ in limiter.check(check, on: loop) }, on: loop)
        }.get()
        #expect(decisions.map(\.allowed) == [true, true, false, false])
        #expect(decisions.map { $0.buckets.map(\.remaining) } == [[1, 4], [0, 3], [0, 3], [0, 3]])
        #expect(decisions.suffix(2).allSatisfy { $0.secondsUntilAllowed == .infinity })
        #expect(try await limiter.check([ip]).buckets[0].remaining == 2)
    }
}

extension RateLimiter {
    /// The event-loop check as a future, so a test can gather many on one loop.
    func check(_ check: RateLimitCheck, on eventLoop: any EventLoop) -> EventLoopFuture<RateLimitDecision> {
        let decision = eventLoop.makePromise(of: RateLimitDecision.self)
        self.check(check, on: eventLoop) { decision.completeWith($0) }
        return decision.futureResult
    }
}
