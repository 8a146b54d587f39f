import RedisClient

/// The token-bucket Lua script: N buckets in, all-or-nothing, one round trip.
///
/// - Time comes from Redis `TIME`, never from a gateway's clock, so gateways with skewed
///   clocks share one notion of "now".
/// - Levels refill lazily from the stored timestamp; a refused request writes nothing, so it
///   spends no token from any bucket.
/// - Each written bucket expires when it would be full again: a full bucket and a missing
///   one are the same, so no garbage stays in Redis.
///
/// KEYS: the buckets. ARGV: for each bucket, capacity then refill per second.
/// Returns `{allowed, wait_ms, remaining_1, full_ms_1, remaining_2, full_ms_2, ...}`, where
/// `wait_ms` is -1 when a refusing bucket never refills.
enum TokenBucketScript {
    static let script = RedisScript(name: "token-bucket", source: """
        local time = redis.call('TIME')
        local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
        local count = #KEYS
        local levels = {}
        local allowed = 1
        local wait = 0
        for i = 1, count do
          local capacity = tonumber(ARGV[2 * i - 1])
          local rate = tonumber(ARGV[2 * i]) / 1000
          local state = redis.call('HMGET', KEYS[i], 'tokens', 'at')
          local level = tonumber(state[1])
          local at = tonumber(state[2])
          if level == nil or at == nil then
            level = capacity
          elseif now > at then
            level = math.min(capacity, level + (now - at) * rate)
          end
          levels[i] = level
          if level < 1 then
            allowed = 0
            if rate > 0 then
              if wait >= 0 then wait = math.max(wait, math.ceil((1 - level) / rate)) end
            else
              wait = -1
            end
          end
        end
        local result = {allowed, 0}
        if allowed == 0 then result[2] = wait end
        for i = 1, count do
          local capacity = tonumber(ARGV[2 * i - 1])
          local rate = tonumber(ARGV[2 * i]) / 1000
          local level = levels[i]
          if allowed == 1 then
            level = level - 1
            local full = -1
            if rate > 0 then full = math.ceil((capacity - level) / rate) end
            redis.call('HSET', KEYS[i], 'tokens', tostring(level), 'at', tostring(now))
            if full > 0 then
              redis.call('PEXPIRE', KEYS[i], full)
            else
              redis.call('PERSIST', KEYS[i])
            end
          end
          local full = -1
          if rate > 0 then full = math.ceil((capacity - level) / rate) end
          if level >= capacity then full = 0 end
          result[2 * i + 1] = math.floor(level)
          result[2 * i + 2] = full
        end
        return result
        """, waitsForReplicas: false)
}
