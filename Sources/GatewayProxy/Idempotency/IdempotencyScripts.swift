import RedisClient

/// The steps of an `Idempotency-Key` that act only for the lock's owner: freeing the key and
/// renewing the lock, scripts on the record (``IdempotencyRecord``) that touch only `KEYS[1]`,
/// one hash tag; and listing a record under its user (``IdempotencyUserIndex``). Taking the
/// lock and storing the answer are native commands (``IdempotencyStore``).
enum IdempotencyScripts {
    /// ARGV: the lock's value. Frees the key when the caller still holds it, so a retry is
    /// forwarded. Replies 1 when freed.
    static let release = RedisScript(name: "idempotency-release", source: """
        if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
        return redis.call('DEL', KEYS[1])
        """)

    /// ARGV: the lock's value, its lifetime (ms). Starts the lock's lifetime again when the
    /// caller still holds it, so a response streaming longer than the lifetime keeps its key.
    /// Replies 1 when renewed, 0 when the record is gone or another's.
    static let renew = RedisScript(name: "idempotency-renew", source: """
        if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
        return redis.call('PEXPIRE', KEYS[1], ARGV[2])
        """)

    /// KEYS: a user's index of records. ARGV: a record's name, how long it may live (ms).
    /// Lists the record until then (the score, by Redis's clock), drops the entries of
    /// records that have expired, and keeps the index as long as its newest entry.
    static let index = RedisScript(name: "idempotency-index", source: """
        local t = redis.call('TIME')
        local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
        local lifetime = tonumber(ARGV[2])
        redis.call('ZADD', KEYS[1], 'GT', now + lifetime, ARGV[1])
        redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
        if redis.call('PTTL', KEYS[1]) < lifetime then redis.call('PEXPIRE', KEYS[1], lifetime) end
        return 1
        """)
}
