import Foundation
import RateLimit
import RedisClient
import Synchronization
import Testing
import TestSupport

@Suite("Token buckets against a real redis-server", .timingSensitive)
struct RedisRateLimiterTests {
    private func limiter(_ server: RedisServer) throws -> (RedisRateLimiter, RedisConnectionPool) {
        let pool = RedisConnectionPool(configuration: RedisConfiguration(url: try RedisURL(server.url), poolSize: 4, timeout: .seconds(5)))
        return (RedisRateLimiter(redis: pool), pool)
    }

    /// 200 concurrent requests at a fresh bucket of capacity N (and negligible refill) admit
    /// exactly N.
    @Test(arguments: [1, 10, 100])
    func concurrentRequestsAdmitExactlyCapacity(capacity: Int) async throws {
        let server = try await RedisServer()
        let (limiter, pool) = try limiter(server)
        defer { pool.shutdown() }
        let bucket = RateLimitBucket(key: "exact:\(capacity)", limit: TokenBucket(capacity: capacity, refillPerSecond: 0.0001))
        let admitted = try await withThrowingTaskGroup(of: Bool.self) { group in
            for _ in 0..<200 {
                group.addTask { try await limiter.check([bucket]).allowed }
            }
            return try await group.reduce(0) { $0 + ($1 ? 1 : 0) }
        }
        #expect(admitted == capacity)
    }

    @Test func refusedRequestsSpendNothing() async throws {
        let server = try await RedisServer()
        let (limiter, pool) = try limiter(server)
        defer { pool.shutdown() }
        let bucket = RateLimitBucket(key: "refused", limit: TokenBucket(capacity: 2, refillPerSecond: 0.0001))
        let first = try await limiter.check([bucket])
        #expect(first.allowed && first.buckets[0].remaining == 1)
        let second = try await limiter.check([bucket])
        #expect(second.allowed && second.buckets[0].remaining == 0)
        for _ in 0..<5 {
            let refused = try await limiter.check([bucket])
            #expect(!refused.allowed)
            #expect(refused.buckets[0].remaining == 0)
            #expect(refused.secondsUntilAllowed > 0)
        }
        // The stored level did not go below zero: one token's refill time is all it needs.
        let level = try await server.cli("HGET", RedisRateLimiter.redisKey(for: bucket), "tokens")
        #expect(Double(level).map { $0 >= 0 && $0 < 0.01 } == true, "level \(level)")
    }

    @Test func refillAdmitsTheRightNumberAfterAMeasuredWait() async throws {
        let server = try await RedisServer()
        let (limiter, pool) = try limiter(server)
        defer { pool.shutdown() }
        // 2 tokens a second. Tokens also accrue while a loop drains the bucket, so every
        // count is checked against the time actually measured, loops included.
        let rate = 2.0
        let bucket = RateLimitBucket(key: "refill", limit: TokenBucket(capacity: 20, refillPerSecond: rate))
        let clock = ContinuousClock()
        func seconds(_ duration: Duration) -> Double {
            Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
        }

        var started = clock.now
        var drained = 0
        // The refusal that ends the loop is the one checked: asking again could land after a
        // token has accrued on a loaded machine.
        var refusal = try await limiter.check([bucket])
        while refusal.allowed {
            drained += 1
            refusal = try await limiter.check([bucket])
        }
        let drainTime = seconds(clock.now - started)
        #expect(drained >= 20 && Double(drained) <= 20 + drainTime * rate + 1, "drained \(drained) in \(drainTime) s")
        #expect(refusal.secondsUntilAllowed > 0 && refusal.secondsUntilAllowed <= 1 / rate + 0.001)

        started = clock.now
        try await Task.sleep(for: .milliseconds(1500))
        var admitted = 0
        while try await limiter.check([bucket]).allowed { admitted += 1 }
        let waited = seconds(clock.now - started)
        // Every token that accrued since the bucket was emptied, and no more.
        #expect(Double(admitted) <= waited * rate + 1 && Double(admitted) >= (waited - 0.2) * rate - 1,
                "admitted \(admitted) after \(waited) s at \(rate)/s")
    }

    @Test func severalBucketsAreAllOrNothing() async throws {
        let server = try await RedisServer()
        let (limiter, pool) = try limiter(server)
        defer { pool.shutdown() }
        let phone = RateLimitBucket(key: "phone:1", limit: TokenBucket(capacity: 1, refillPerSecond: 0.0001))
        let ip = RateLimitBucket(key: "ip:1", limit: TokenBucket(capacity: 5, refillPerSecond: 0.0001))
        let first = try await limiter.check([phone, ip])
        #expect(first.allowed)
        #expect(first.buckets.map(\.remaining) == [0, 4])
        #expect(first.tightest?.remaining == 0)
        // The phone bucket refuses: the IP bucket must not be spent.
        for _ in 0..<3 {
            let refused = try await limiter.check([phone, ip])
            #expect(!refused.allowed)
            #expect(refused.buckets.map(\.remaining) == [0, 4])
        }
        let otherPhone = RateLimitBucket(key: "phone:2", limit: phone.limit)
        #expect(try await limiter.check([otherPhone, ip]).buckets.map(\.remaining) == [0, 3])
    }

    @Test func bucketsExpireWhenFullAgainAndCarryHashTags() async throws {
        let server = try await RedisServer()
        let (limiter, pool) = try limiter(server)
        defer { pool.shutdown() }
        let bucket = RateLimitBucket(key: "expiry", limit: TokenBucket(capacity: 10, refillPerSecond: 2))
        _ = try await limiter.check([bucket])
        let key = RedisRateLimiter.redisKey(for: bucket)
        #expect(key == "pg:rl:{expiry}")
        let ttl = Int(try await server.cli("PTTL", key)) ?? -2
        #expect(ttl > 0 && ttl <= 500, "one token at 2/s is back within 500 ms, ttl \(ttl)")
        try await eventually(timeout: .seconds(2)) { try await server.cli("EXISTS", key) == "0" }
    }

    @Test func aBucketThatNeverRefillsSaysSo() async throws {
        let server = try await RedisServer()
        let (limiter, pool) = try limiter(server)
        defer { pool.shutdown() }
        let bucket = RateLimitBucket(key: "never", limit: TokenBucket(capacity: 1, refillPerSecond: 0))
        #expect(try await limiter.check([bucket]).allowed)
        let refused = try await limiter.check([bucket])
        #expect(!refused.allowed)
        #expect(refused.secondsUntilAllowed == .infinity)
    }

    @Test func twoInstancesShareOneBucket() async throws {
        let server = try await RedisServer()
        let (first, firstPool) = try limiter(server)
        let (second, secondPool) = try limiter(server)
        defer { firstPool.shutdown(); secondPool.shutdown() }
        let bucket = RateLimitBucket(key: "shared", limit: TokenBucket(capacity: 10, refillPerSecond: 0.0001))
        let admitted = try await withThrowingTaskGroup(of: Bool.self) { group in
            for index in 0..<40 {
                group.addTask { try await (index % 2 == 0 ? first : second).check([bucket]).allowed }
            }
            return try await group.reduce(0) { $0 + ($1 ? 1 : 0) }
        }
        #expect(admitted == 10)
    }

    @Test func aStoppedRedisFailsWithinTheTimeout() async throws {
        let server = try await RedisServer()
        let pool = RedisConnectionPool(configuration: RedisConfiguration(url: try RedisURL(server.url), poolSize: 1, timeout: .milliseconds(250)))
        defer { pool.shutdown() }
        let limiter = RedisRateLimiter(redis: pool)
        await server.stop()
        let clock = ContinuousClock()
        let start = clock.now
        await #expect(throws: RedisError.self) {
            _ = try await limiter.check([RateLimitBucket(key: "down", limit: TokenBucket(capacity: 1, refillPerSecond: 1))])
        }
        // Refused at once (no Redis to dial), not after the timeout; the exact
        // timeout + 100 ms budget is measured by the fault suite, not under parallel tests.
        #expect(clock.now - start < .milliseconds(500))
    }
}
