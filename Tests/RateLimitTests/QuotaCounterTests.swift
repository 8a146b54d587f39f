import Foundation
import RateLimit
import RedisClient
import Testing
import TestSupport

/// Quota counters in the token-bucket script, against a real redis-server: exact under
/// concurrency, only admitted requests counted, the limit taken from each check.
@Suite("Quota counters against a real redis-server", .realProcesses)
struct QuotaCounterTests {
    private func limiter(_ server: RedisServer) throws -> (RedisRateLimiter, RedisConnectionPool) {
        let pool = RedisConnectionPool(configuration: RedisConfiguration(url: try RedisURL(server.url), poolSize: 4, timeout: .seconds(5)))
        return (RedisRateLimiter(redis: pool), pool)
    }

    @Test func aQuotaAdmitsExactlyItsLimitAndARaiseAdmitsTheDifference() async throws {
        let server = try await RedisServer()
        let (limiter, pool) = try limiter(server)
        defer { pool.shutdown() }
        let end = Int(Date().timeIntervalSince1970) + 3600
        func admitted(limit: Int, requests: Int) async throws -> [RateLimitDecision] {
            let quota = RateLimitBucket.quota(key: "quota:key:key_1:2026-11-26", limit: limit, periodEnd: end)
            return try await withThrowingTaskGroup(of: RateLimitDecision.self) { group in
                for _ in 0..<requests { group.addTask { try await limiter.check([quota]) } }
                return try await group.reduce(into: []) { $0.append($1) }
            }
        }
        let first = try await admitted(limit: 10, requests: 40)
        #expect(first.filter(\.allowed).count == 10)
        let refused = try #require(first.first { !$0.allowed })
        #expect(refused.exceededQuota)
        #expect(refused.buckets[0].isQuota && refused.buckets[0].remaining == 0)
        // The wait is to the end of the period, not a refill.
        #expect(abs(refused.secondsUntilAllowed - 3600) < 5, "\(refused.secondsUntilAllowed)")
        #expect(try await server.cli("GET", RedisRateLimiter.redisKey(for: .quota(key: "quota:key:key_1:2026-11-26", limit: 10, periodEnd: end))) == "10")

        let raised = try await admitted(limit: 15, requests: 40)
        #expect(raised.filter(\.allowed).count == 5)
        // The counter expires a day after its period.
        let ttl = Int(try await server.cli("TTL", RedisRateLimiter.redisKey(for: .quota(key: "quota:key:key_1:2026-11-26", limit: 15, periodEnd: end)))) ?? 0
        #expect(abs(ttl - (3600 + 86_400)) < 10, "TTL \(ttl)")
    }

    @Test func aKeysQuotaAndItsPartnersBothApply() async throws {
        let server = try await RedisServer()
        let (limiter, pool) = try limiter(server)
        defer { pool.shutdown() }
        let end = Int(Date().timeIntervalSince1970) + 600
        let partnerQuota = RateLimitBucket.quota(key: "quota:partner:ptr_1:2026-11", limit: 4, periodEnd: end)
        let first = RateLimitBucket.quota(key: "quota:key:key_1:2026-11-26", limit: 3, periodEnd: end)
        let second = RateLimitBucket.quota(key: "quota:key:key_2:2026-11-26", limit: 3, periodEnd: end)
        var allowed: [Bool] = []
        for _ in 0..<4 { allowed.append(try await limiter.check([first, partnerQuota]).allowed) }
        #expect(allowed == [true, true, true, false], "the key's own quota of 3")
        allowed = []
        for _ in 0..<3 { allowed.append(try await limiter.check([second, partnerQuota]).allowed) }
        #expect(allowed == [true, false, false], "the partner's 4 shared by both keys")
        let refused = try await limiter.check([second, partnerQuota])
        #expect(refused.exceededQuota && refused.tightest?.limit.capacity == 4)
    }

    @Test func aBucketAndAQuotaDecideTogetherAndARefusalSpendsNeither() async throws {
        let server = try await RedisServer()
        let (limiter, pool) = try limiter(server)
        defer { pool.shutdown() }
        let end = Int(Date().timeIntervalSince1970) + 600
        let bucket = RateLimitBucket(key: "route:orders:partner:ptr_1", limit: TokenBucket(capacity: 3, refillPerSecond: 0.0001))
        let quota = RateLimitBucket.quota(key: "quota:key:key_2:2026-11-26", limit: 5, periodEnd: end)
        var decisions: [RateLimitDecision] = []
        for _ in 0..<5 { decisions.append(try await limiter.check([bucket, quota])) }
        #expect(decisions.map(\.allowed) == [true, true, true, false, false])
        // The bucket refused: not a quota refusal, and the quota counted only the three.
        #expect(!decisions[3].exceededQuota)
        #expect(try await server.cli("GET", RedisRateLimiter.redisKey(for: quota)) == "3")
    }
}
