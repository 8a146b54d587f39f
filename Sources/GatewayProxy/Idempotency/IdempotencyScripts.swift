import RedisClient

/// The step of an `Idempotency-Key` that acts only for the lock's owner: freeing the key, a
/// script on the record (``IdempotencyRecord``) that touches only `KEYS[1]`, one hash tag.
/// Taking the lock and storing the answer are native commands (``IdempotencyStore``).
enum IdempotencyScripts {
    /// ARGV: the lock's value. Frees the key when the caller still holds it, so a retry is
    /// forwarded. Replies 1 when freed.
    static let release = RedisScript(name: "idempotency-release", source: """
        if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
        return redis.call('DEL', KEYS[1])
        """)
}
