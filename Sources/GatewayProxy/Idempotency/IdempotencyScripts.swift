import RedisClient

/// The two steps of an `Idempotency-Key` that act only for the lock's owner, each one
/// script on the record (``IdempotencyRecord``); taking the lock is a plain `SET … NX GET`.
/// Each touches only `KEYS[1]`, one hash tag.
enum IdempotencyScripts {
    /// ARGV: the lock's value, the stored answer's value, its lifetime in ms. Stores only while
    /// the caller still holds the lock (it may have expired and been taken by another request).
    /// Replies 1 when stored, 0 when not.
    static let store = RedisScript(name: "idempotency-store", source: """
        if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
        redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
        return 1
        """)

    /// ARGV: the lock's value. Frees the key when the caller still holds it, so a retry is
    /// forwarded. Replies 1 when freed.
    static let release = RedisScript(name: "idempotency-release", source: """
        if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
        return redis.call('DEL', KEYS[1])
        """)
}
