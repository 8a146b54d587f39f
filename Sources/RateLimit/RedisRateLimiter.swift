import NIOCore
import RedisClient

/// ``RateLimiter`` on Redis: one `EVALSHA` of ``TokenBucketScript`` per decision, or per batch
/// of decisions on the same buckets made together on one event loop (``TokenBucketBatches``).
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
    private let batches: TokenBucketBatches

    public init(redis: RedisConnectionPool) {
        self.redis = redis
        self.batches = TokenBucketBatches(redis: redis)
    }

    public static func redisKey(for bucket: RateLimitBucket) -> String {
        "\(keyPrefix){\(bucket.key)}"
    }

    public func check(_ buckets: [RateLimitBucket]) async throws -> RateLimitDecision {
        guard !buckets.isEmpty else { return .unlimited }
        guard isClustered, buckets.count > 1 else { return try await checkInOneScript(buckets) }
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
        let (keys, arguments) = Self.scriptInput(buckets)
        let reply = try await redis.run(TokenBucketScript.script, keys: keys, arguments: arguments)
        return try Self.decisions(from: reply, buckets: buckets, requests: 1)[0]
    }

    private var isClustered: Bool { redis.configuration.cluster != nil }

    /// A check made once and run again and again (a connection's per-user limit). Buckets of
    /// several slots on a cluster get no script call: they take the per-slot asynchronous path.
    public func prepare(_ buckets: [RateLimitBucket]) -> RateLimitCheck {
        guard !buckets.isEmpty else { return RateLimitCheck(buckets: buckets) }
        if isClustered, Set(buckets.map { RedisHashSlot.of(Self.redisKey(for: $0)) }).count > 1 {
            return RateLimitCheck(buckets: buckets)
        }
        let (keys, arguments) = Self.scriptInput(buckets)
        return RateLimitCheck(buckets: buckets, scriptCall: try? RedisScriptCall(TokenBucketScript.script, keys: keys, arguments: arguments))
    }

    /// Decided by one `EVALSHA` on a connection of `eventLoop` (``RedisConnectionPool/run(_:on:)``)
    /// for every check of the same buckets made on that loop in the same loop tick
    /// (``TokenBucketBatches``), in the order they were made.
    public func check(_ check: RateLimitCheck, on eventLoop: any EventLoop) -> EventLoopFuture<RateLimitDecision> {
        guard !check.buckets.isEmpty else { return eventLoop.makeSucceededFuture(.unlimited) }
        guard check.scriptCall != nil else {
            return eventLoop.makeFutureWithTask { try await self.check(check.buckets) }
        }
        return batches.check(check, on: eventLoop)
    }

    /// The script's keys, and for each bucket its capacity and refill per second.
    static func scriptInput(_ buckets: [RateLimitBucket]) -> (keys: [String], arguments: [String]) {
        var arguments: [String] = []
        arguments.reserveCapacity(buckets.count * 2 + 1)
        for bucket in buckets {
            arguments.append(String(bucket.limit.capacity))
            arguments.append(String(bucket.limit.refillPerSecond))
        }
        return (buckets.map(Self.redisKey(for:)), arguments)
    }

    /// The decision of each of `requests` requests on `buckets`, in order, from
    /// ``TokenBucketScript``'s reply.
    static func decisions(from reply: RedisValue, buckets: [RateLimitBucket], requests: Int) throws -> [RateLimitDecision] {
        guard case .array(let elements) = reply, elements.count >= 2 else {
            throw RedisError.protocolViolation("unexpected token-bucket reply")
        }
        var values: [Int64] = []
        values.reserveCapacity(elements.count)
        for element in elements {
            guard let value = element.int else { throw RedisError.protocolViolation("unexpected token-bucket reply") }
            values.append(value)
        }
        let admitted = Int(values[0])
        let block = 2 * buckets.count
        guard admitted >= 0, admitted <= requests, values.count == 2 + block * (admitted + 1) else {
            throw RedisError.protocolViolation("unexpected token-bucket reply")
        }
        let wait = values[1]
        return (0..<requests).map { request in
            let offset = 2 + block * min(request, admitted)
            let states = buckets.indices.map { index in
                let full = values[offset + 2 * index + 1]
                return RateLimitDecision.BucketState(
                    limit: buckets[index].limit,
                    remaining: max(0, Int(values[offset + 2 * index])),
                    secondsUntilFull: full < 0 ? .infinity : Double(full) / 1000
                )
            }
            let allowed = request < admitted
            return RateLimitDecision(
                allowed: allowed,
                secondsUntilAllowed: allowed ? 0 : (wait < 0 ? .infinity : Double(wait) / 1000),
                buckets: states
            )
        }
    }
}

extension RedisRateLimiter {
    /// The Lua source and SHA-1 of the script, for tools that run it by other means
    /// (`redis-benchmark` in benchmarks/).
    public static var scriptSource: String { TokenBucketScript.script.source }
    public static var scriptSHA1: String { TokenBucketScript.script.sha1 }
}
