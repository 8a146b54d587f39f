import RedisClient

/// The token-bucket Lua script: N buckets in, all-or-nothing, one round trip, for one request
/// or for several that arrived together (decided in order, exactly as if each had run alone).
///
/// - Time comes from Redis `TIME`, never from a gateway's clock, so gateways with skewed
///   clocks share one notion of "now".
/// - Levels refill lazily from the stored timestamp; a refused request writes nothing, so it
///   spends no token from any bucket.
/// - Each written bucket expires when it would be full again: a full bucket and a missing
///   one are the same, so no garbage stays in Redis.
///
/// KEYS: the buckets. ARGV: for each bucket, capacity then refill per second; then, optionally,
/// how many requests ask (default 1). A quota (``RateLimitBucket/quota(key:limit:periodEnd:)``)
/// is a bucket whose second argument is `q<end of its period, Unix seconds>`: a plain counter
/// of the period's admitted requests, compared with the capacity sent (so a raised quota counts
/// at once), whose "full" time is the period's end and which expires a day after it.
/// Request `j` (from 0) is admitted when every bucket still holds a whole token after the `j`
/// before it took theirs, so the first `admitted` are and the rest are refused.
/// Returns `{admitted, wait_ms, then for each admitted request and then once for the refused
/// ones: remaining_1, full_ms_1, remaining_2, full_ms_2, ...}`: the state each admitted request
/// left the buckets in, and the state every refused one sees. `wait_ms` is the refused ones'
/// wait, -1 when a refusing bucket never refills.
enum TokenBucketScript {
    static let script = RedisScript(name: "token-bucket", source: """
        local time = redis.call('TIME')
        local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
        local count = #KEYS
        local requests = tonumber(ARGV[2 * count + 1]) or 1
        local levels = {}
        local ends = {}
        local admitted = requests
        for i = 1, count do
          local capacity = tonumber(ARGV[2 * i - 1])
          local spec = ARGV[2 * i]
          local level
          if string.byte(spec, 1) == 113 then
            ends[i] = tonumber(string.sub(spec, 2))
            level = capacity - (tonumber(redis.call('GET', KEYS[i])) or 0)
          else
            local rate = tonumber(spec) / 1000
            local state = redis.call('HMGET', KEYS[i], 'tokens', 'at')
            level = tonumber(state[1])
            local at = tonumber(state[2])
            if level == nil or at == nil then
              level = capacity
            elseif now > at then
              level = math.min(capacity, level + (now - at) * rate)
            end
          end
          levels[i] = level
          local fits = 0
          if level >= 1 then fits = math.floor(level) end
          if fits < admitted then admitted = fits end
        end
        local result = {admitted, 0}
        local function untilFull(i, level)
          if ends[i] then return math.max(0, ends[i] * 1000 - now) end
          local capacity = tonumber(ARGV[2 * i - 1])
          local rate = tonumber(ARGV[2 * i]) / 1000
          if level >= capacity then return 0 end
          if rate > 0 then return math.ceil((capacity - level) / rate) end
          return -1
        end
        local function describe(i, level)
          result[#result + 1] = math.floor(level)
          result[#result + 1] = untilFull(i, level)
        end
        for j = 1, admitted do
          for i = 1, count do describe(i, levels[i] - j) end
        end
        local wait = 0
        for i = 1, count do
          local level = levels[i] - admitted
          if ends[i] then
            if admitted > 0 then
              redis.call('INCRBY', KEYS[i], admitted)
              redis.call('EXPIREAT', KEYS[i], ends[i] + 86400)
            end
            if level < 1 and wait >= 0 then wait = math.max(wait, untilFull(i, level)) end
          else
            local rate = tonumber(ARGV[2 * i]) / 1000
            if admitted > 0 then
              local full = untilFull(i, level)
              redis.call('HSET', KEYS[i], 'tokens', tostring(level), 'at', tostring(now))
              if full > 0 then
                redis.call('PEXPIRE', KEYS[i], full)
              else
                redis.call('PERSIST', KEYS[i])
              end
            end
            if level < 1 then
              if rate > 0 then
                if wait >= 0 then wait = math.max(wait, math.ceil((1 - level) / rate)) end
              else
                wait = -1
              end
            end
          end
          describe(i, level)
        end
        if admitted < requests then result[2] = wait end
        return result
        """, waitsForReplicas: false)

    /// KEYS: one bucket. ARGV: its capacity, refill per second.
    /// Adds one token to the bucket's level as of now (refilled as ``script`` would), capped
    /// at the capacity; a bucket that is full again is deleted, as ``script`` lets it expire.
    /// A missing bucket is full, so there is nothing to give back. Returns 1 when it added.
    static let refund = RedisScript(name: "token-bucket-refund", source: """
        local time = redis.call('TIME')
        local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
        local capacity = tonumber(ARGV[1])
        local rate = tonumber(ARGV[2]) / 1000
        local state = redis.call('HMGET', KEYS[1], 'tokens', 'at')
        local level = tonumber(state[1])
        local at = tonumber(state[2])
        if level == nil or at == nil then return 0 end
        if now > at then level = math.min(capacity, level + (now - at) * rate) end
        level = math.min(capacity, level + 1)
        if level >= capacity then
          redis.call('DEL', KEYS[1])
          return 1
        end
        redis.call('HSET', KEYS[1], 'tokens', tostring(level), 'at', tostring(now))
        if rate > 0 then
          redis.call('PEXPIRE', KEYS[1], math.ceil((capacity - level) / rate))
        else
          redis.call('PERSIST', KEYS[1])
        end
        return 1
        """, waitsForReplicas: false)
}
