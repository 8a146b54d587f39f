import RedisClient

/// The three atomic steps of an `Idempotency-Key`, each one script on the key's record (a
/// hash: `state` `flight` or `done`, the request's `fp`, the forwarding request's `owner`
/// token, the encrypted response `blob`). Each touches only `KEYS[1]`, one hash tag.
enum IdempotencyScripts {
    /// ARGV: fingerprint, owner token, lock lifetime in ms. Replies `{"go"}` (the caller now
    /// owns the key and forwards), `{"mismatch"}` (another request used the key),
    /// `{"flight"}` (the first is still under way) or `{"stored", blob}`.
    static let lock = RedisScript(name: "idempotency-lock", source: """
        local record = redis.call('HMGET', KEYS[1], 'state', 'fp', 'blob')
        if not record[1] then
          redis.call('HSET', KEYS[1], 'state', 'flight', 'fp', ARGV[1], 'owner', ARGV[2])
          redis.call('PEXPIRE', KEYS[1], ARGV[3])
          return {'go'}
        end
        if record[2] ~= ARGV[1] then return {'mismatch'} end
        if record[1] == 'flight' then return {'flight'} end
        return {'stored', record[3]}
        """)

    /// ARGV: owner token, encrypted response, lifetime in ms. Stores only while the caller
    /// still owns the key (its lock may have expired and been taken by another request).
    /// Replies 1 when stored, 0 when not.
    static let store = RedisScript(name: "idempotency-store", source: """
        if redis.call('HGET', KEYS[1], 'owner') ~= ARGV[1] then return 0 end
        -- The owner emptied, not deleted: HDEL is not among the commands of the gateway's ACL user.
        redis.call('HSET', KEYS[1], 'state', 'done', 'blob', ARGV[2], 'owner', '')
        redis.call('PEXPIRE', KEYS[1], ARGV[3])
        return 1
        """)

    /// ARGV: owner token. Frees the key when the caller still owns it, so a retry is
    /// forwarded. Replies 1 when freed.
    static let release = RedisScript(name: "idempotency-release", source: """
        if redis.call('HGET', KEYS[1], 'owner') ~= ARGV[1] then return 0 end
        return redis.call('DEL', KEYS[1])
        """)
}
