import Foundation
import RateLimit
import RedisClient
import Testing
import TestSupport

/// The limiter on Redis Cluster: one bucket is one script, exact under concurrency; buckets of
/// several slots are checked one slot at a time and a refusal spends nothing after it.
@Suite(.serialized, .realProcesses) struct ClusterRateLimiterTests {
    @Test func bucketsOfSeveralSlotsAreCheckedInOrderAndStopAtTheFirstRefusal() async throws {
        let cluster = try await RedisClusterGroup()
        let pool = RedisConnectionPool(configuration: RedisConfiguration(
            url: try RedisURL("redis://127.0.0.1:1/0"),
            cluster: RedisCluster(seeds: [RedisNodeAddress(host: "127.0.0.1", port: cluster.nodes[0].port)]),
            poolSize: 2, timeout: .seconds(2)
        ))
        defer { pool.shutdown() }
        let limiter = RedisRateLimiter(redis: pool)
        let phone = RateLimitBucket(key: "otp-phone:a", limit: TokenBucket(capacity: 1, refillPerSecond: 0.0001))
        let address = RateLimitBucket(key: "otp-ip:b", limit: TokenBucket(capacity: 5, refillPerSecond: 0.0001))
        let slots = [phone, address].map { RedisHashSlot.of(RedisRateLimiter.redisKey(for: $0)) }
        #expect(slots[0] != slots[1], "the test needs two slots")

        let first = try await limiter.check([phone, address])
        #expect(first.allowed)
        #expect(first.buckets.map(\.remaining) == [0, 4])
        // The phone's bucket is empty: refused, and the address's bucket is not touched.
        let second = try await limiter.check([phone, address])
        #expect(!second.allowed)
        #expect(second.secondsUntilAllowed > 0)
        let third = try await limiter.check([address])
        #expect(third.allowed && third.buckets.map(\.remaining) == [3])

        // One bucket under 200 concurrent checks admits exactly its capacity.
        let exact = RateLimitBucket(key: "exact:cluster", limit: TokenBucket(capacity: 25, refillPerSecond: 0.0001))
        let admitted = try await withThrowingTaskGroup(of: Bool.self) { group in
            for _ in 0..<200 { group.addTask { try await limiter.check([exact]).allowed } }
            return try await group.reduce(0) { $0 + ($1 ? 1 : 0) }
        }
        #expect(admitted == 25)
    }
}
