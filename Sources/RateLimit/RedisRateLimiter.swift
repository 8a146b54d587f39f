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

    public var eventLoopGroup: any EventLoopGroup { redis.eventLoopGroup }

    /// A check made once and run again and again (a connection's per-user limit). On a
    /// cluster, buckets of several slots become one check per slot. Each call ends with the
    /// script's request count, 1, which ``TokenBucketBatches`` replaces when it sends several
    /// checks in one run.
    public func prepare(_ buckets: [RateLimitBucket]) -> RateLimitCheck {
        guard !buckets.isEmpty else { return RateLimitCheck(buckets: buckets) }
        guard redis.keysMustShareASlot, buckets.count > 1 else { return prepareInOneScript(buckets) }
        var slots: [Int] = []
        var bySlot: [Int: [RateLimitBucket]] = [:]
        for bucket in buckets {
            let slot = RedisHashSlot.of(Self.redisKey(for: bucket))
            if bySlot[slot] == nil { slots.append(slot) }
            bySlot[slot, default: []].append(bucket)
        }
        guard slots.count > 1 else { return prepareInOneScript(buckets) }
        return RateLimitCheck(buckets: buckets, slots: slots.map { prepareInOneScript(bySlot[$0] ?? []) })
    }

    private func prepareInOneScript(_ buckets: [RateLimitBucket]) -> RateLimitCheck {
        let (keys, arguments) = Self.scriptInput(buckets)
        return RateLimitCheck(buckets: buckets, scriptCall: try? RedisScriptCall(TokenBucketScript.script, keys: keys, arguments: arguments + ["1"]))
    }

    /// Decided by one `EVALSHA` on a connection of `eventLoop` (``RedisConnectionPool/run(_:on:tracedUnder:)``)
    /// for every check of the same buckets made on that loop in the same loop tick
    /// (``TokenBucketBatches``), in the order they were made; a check of several cluster
    /// slots, one slot after the other.
    public func check(_ check: RateLimitCheck, on eventLoop: any EventLoop, then decided: @escaping RateLimitDecided) {
        if let call = check.scriptCall {
            batches.check(check, call: call, on: eventLoop, then: decided)
        } else if check.slots.isEmpty {
            let result: Result<RateLimitDecision, any Error> = check.buckets.isEmpty
                ? .success(.unlimited) : .failure(RedisError.protocolViolation("the token-bucket call could not be encoded"))
            eventLoop.execute { decided(result) }
        } else {
            checkInTurn(check.slots, from: 0, RateLimitDecision(allowed: true, secondsUntilAllowed: 0, buckets: []), on: eventLoop, then: decided)
        }
    }

    /// The checks of `slots` from `index` on, one after the other, stopping at the first
    /// refusal: the decision lists the buckets checked.
    private func checkInTurn(
        _ slots: [RateLimitCheck], from index: Int, _ decision: RateLimitDecision, on eventLoop: any EventLoop,
        then decided: @escaping RateLimitDecided
    ) {
        guard index < slots.count else {
            decided(.success(decision))
            return
        }
        check(slots[index], on: eventLoop) { result in
            guard case .success(let part) = result else {
                decided(result)
                return
            }
            var decision = decision
            decision.buckets += part.buckets
            decision.secondsUntilAllowed = max(decision.secondsUntilAllowed, part.secondsUntilAllowed)
            guard part.allowed else {
                decision.allowed = false
                decided(.success(decision))
                return
            }
            self.checkInTurn(slots, from: index + 1, decision, on: eventLoop, then: decided)
        }
    }

    public func refund(_ bucket: RateLimitBucket) async throws {
        _ = try await redis.run(
            TokenBucketScript.refund,
            keys: [Self.redisKey(for: bucket)],
            arguments: [String(bucket.limit.capacity), String(bucket.limit.refillPerSecond)]
        )
    }

    /// The script's keys, and for each bucket its capacity and refill per second.
    static func scriptInput(_ buckets: [RateLimitBucket]) -> (keys: [String], arguments: [String]) {
        var arguments: [String] = []
        arguments.reserveCapacity(buckets.count * 2 + 1)
        for bucket in buckets {
            arguments.append(String(bucket.limit.capacity))
            arguments.append(bucket.quotaEnd.map { "q\($0)" } ?? String(bucket.limit.refillPerSecond))
        }
        return (buckets.map(Self.redisKey(for:)), arguments)
    }

    /// The decision of each of `requests` requests on `buckets`, in order, from
    /// ``TokenBucketScript``'s reply, handed to `decided` with the request's index: read
    /// straight from the reply, the refused ones sharing one list of bucket states. Throws,
    /// having handed over nothing, when the reply is not the script's.
    static func decide(
        from reply: RedisValue, buckets: [RateLimitBucket], requests: Int,
        _ decided: (Int, RateLimitDecision) -> Void
    ) throws {
        let violation = RedisError.protocolViolation("unexpected token-bucket reply")
        guard case .array(let elements) = reply, elements.count >= 2, let admitted = elements[0].int.map(Int.init),
              let wait = elements[1].int
        else { throw violation }
        let block = 2 * buckets.count
        guard admitted >= 0, admitted <= requests, elements.count == 2 + block * (admitted + 1),
              elements.allSatisfy({ $0.int != nil })
        else { throw violation }
        func states(at offset: Int) -> [RateLimitDecision.BucketState] {
            buckets.indices.map { index in
                let full = elements[offset + 2 * index + 1].int ?? 0
                return RateLimitDecision.BucketState(
                    limit: buckets[index].limit,
                    remaining: max(0, Int(elements[offset + 2 * index].int ?? 0)),
                    secondsUntilFull: full < 0 ? .infinity : Double(full) / 1000,
                    isQuota: buckets[index].quotaEnd != nil
                )
            }
        }
        for request in 0..<admitted {
            decided(request, RateLimitDecision(allowed: true, secondsUntilAllowed: 0, buckets: states(at: 2 + block * request)))
        }
        guard admitted < requests else { return }
        let refused = RateLimitDecision(
            allowed: false, secondsUntilAllowed: wait < 0 ? .infinity : Double(wait) / 1000, buckets: states(at: 2 + block * admitted)
        )
        for request in admitted..<requests { decided(request, refused) }
    }
}

extension RedisRateLimiter {
    /// The Lua source and SHA-1 of the script, for tools that run it by other means
    /// (`redis-benchmark` in benchmarks/).
    public static var scriptSource: String { TokenBucketScript.script.source }
    public static var scriptSHA1: String { TokenBucketScript.script.sha1 }
}
