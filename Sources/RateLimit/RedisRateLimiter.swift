import NIOCore
import RedisClient

/// ``RateLimiter`` on Redis: one `EVALSHA` of ``TokenBucketScript`` per decision.
///
/// Keys are `pg:rl:{<bucket key>}`: the braces are a Redis Cluster hash tag, so each bucket
/// lives in one slot. A decision over several buckets (OTP phone and IP) touches several
/// slots, which a single primary (with replicas or Sentinel) serves in one script; on Redis
/// Cluster those buckets would have to share a tag or be checked in separate steps.
public struct RedisRateLimiter: RateLimiter {
    public static let keyPrefix = "pg:rl:"
    private let redis: RedisConnectionPool

    public init(redis: RedisConnectionPool) {
        self.redis = redis
    }

    public static func redisKey(for bucket: RateLimitBucket) -> String {
        "\(keyPrefix){\(bucket.key)}"
    }

    public func check(_ buckets: [RateLimitBucket]) async throws -> RateLimitDecision {
        guard !buckets.isEmpty else { return .unlimited }
        let (keys, arguments) = Self.scriptInput(buckets)
        return try Self.decision(from: await redis.run(TokenBucketScript.script, keys: keys, arguments: arguments), buckets: buckets)
    }

    public func prepare(_ buckets: [RateLimitBucket]) -> RateLimitCheck {
        guard !buckets.isEmpty else { return RateLimitCheck(buckets: buckets) }
        let (keys, arguments) = Self.scriptInput(buckets)
        return RateLimitCheck(buckets: buckets, scriptCall: try? RedisScriptCall(TokenBucketScript.script, keys: keys, arguments: arguments))
    }

    /// One `EVALSHA` on a connection of `eventLoop` (``RedisConnectionPool/run(_:on:)``),
    /// decided in the reply's callback.
    public func check(_ check: RateLimitCheck, on eventLoop: any EventLoop) -> EventLoopFuture<RateLimitDecision> {
        guard !check.buckets.isEmpty else { return eventLoop.makeSucceededFuture(.unlimited) }
        guard let call = check.scriptCall else {
            return eventLoop.makeFutureWithTask { try await self.check(check.buckets) }
        }
        let buckets = check.buckets
        return redis.run(call, on: eventLoop).flatMapThrowing { reply in
            try Self.decision(from: reply, buckets: buckets)
        }
    }

    /// The script's keys, and for each bucket its capacity and refill per second.
    private static func scriptInput(_ buckets: [RateLimitBucket]) -> (keys: [String], arguments: [String]) {
        var arguments: [String] = []
        arguments.reserveCapacity(buckets.count * 2)
        for bucket in buckets {
            arguments.append(String(bucket.limit.capacity))
            arguments.append(String(bucket.limit.refillPerSecond))
        }
        return (buckets.map(Self.redisKey(for:)), arguments)
    }

    /// The decision ``TokenBucketScript`` replied for `buckets`.
    private static func decision(from reply: RedisValue, buckets: [RateLimitBucket]) throws -> RateLimitDecision {
        guard case .array(let elements) = reply, elements.count == 2 + 2 * buckets.count else {
            throw RedisError.protocolViolation("unexpected token-bucket reply")
        }
        var values: [Int64] = []
        values.reserveCapacity(elements.count)
        for element in elements {
            guard let value = element.int else { throw RedisError.protocolViolation("unexpected token-bucket reply") }
            values.append(value)
        }
        let states = buckets.indices.map { index in
            let full = values[3 + 2 * index]
            return RateLimitDecision.BucketState(
                limit: buckets[index].limit,
                remaining: max(0, Int(values[2 + 2 * index])),
                secondsUntilFull: full < 0 ? .infinity : Double(full) / 1000
            )
        }
        let wait = values[1]
        return RateLimitDecision(
            allowed: values[0] == 1,
            secondsUntilAllowed: wait < 0 ? .infinity : Double(wait) / 1000,
            buckets: states
        )
    }
}

extension RedisRateLimiter {
    /// The Lua source and SHA-1 of the script, for tools that run it by other means
    /// (`redis-benchmark` in benchmarks/).
    public static var scriptSource: String { TokenBucketScript.script.source }
    public static var scriptSHA1: String { TokenBucketScript.script.sha1 }
}
