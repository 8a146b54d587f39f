import RedisClient

/// ``RateLimiter`` on Redis: one `EVALSHA` of ``TokenBucketScript`` per decision.
///
/// Keys are `pg:rl:{<bucket key>}`: the braces are a Redis Cluster hash tag, so each bucket
/// lives in one slot. A decision over several buckets (OTP phone and IP) touches several
/// slots, which a single primary (with replicas or Sentinel) serves in one script. On Redis
/// Cluster a script must stay in one slot, so the buckets are checked one slot at a time, in
/// order, stopping at the first refusal: a refused request may then have spent a token of a
/// bucket checked before (it errs towards limiting, never lets more through), and the
/// decision lists only the buckets it checked.
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
        guard !buckets.isEmpty else {
            return RateLimitDecision(allowed: true, secondsUntilAllowed: 0, buckets: [])
        }
        guard redis.configuration.cluster != nil, buckets.count > 1 else { return try await checkInOneScript(buckets) }
        var slots: [Int] = []
        var bySlot: [Int: [RateLimitBucket]] = [:]
        for bucket in buckets {
            let slot = RedisHashSlot.of(Self.redisKey(for: bucket))
            if bySlot[slot] == nil { slots.append(slot) }
            bySlot[slot, default: []].append(bucket)
        }
        var decision = RateLimitDecision(allowed: true, secondsUntilAllowed: 0, buckets: [])
        for slot in slots {
            let part = try await checkInOneScript(bySlot[slot] ?? [])
            decision.buckets += part.buckets
            decision.secondsUntilAllowed = max(decision.secondsUntilAllowed, part.secondsUntilAllowed)
            guard part.allowed else {
                decision.allowed = false
                break
            }
        }
        return decision
    }

    /// One script run over `buckets`, all or nothing: every bucket spends a token, or none.
    private func checkInOneScript(_ buckets: [RateLimitBucket]) async throws -> RateLimitDecision {
        var arguments: [String] = []
        arguments.reserveCapacity(buckets.count * 2)
        for bucket in buckets {
            arguments.append(String(bucket.limit.capacity))
            arguments.append(String(bucket.limit.refillPerSecond))
        }
        let reply = try await redis.run(
            TokenBucketScript.script,
            keys: buckets.map(Self.redisKey(for:)),
            arguments: arguments
        )
        guard let values = reply.array?.compactMap(\.int), values.count == 2 + 2 * buckets.count else {
            throw RedisError.protocolViolation("unexpected token-bucket reply")
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
