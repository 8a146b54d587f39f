import RedisClient

/// The atomic steps of the registry: each checks state and writes in one script, and publishes
/// the cache invalidation in the same step, so no instance can keep verifying a key that a
/// returned admin command ended.
///
/// Redis Cluster safe: each script touches one key, named in KEYS. A rotation, which changes
/// two keys' records (two hash tags), is two steps in ``KeyRegistry/rotateKey(id:grace:now:)``.
enum RegistryScripts {
    /// KEYS: the old key's record.
    /// ARGV: its new expiry, the new key's id, the channel, now, the old key's hash.
    /// Returns 1, or 0 when the old key is no longer active (revoked, rotated or expired
    /// meanwhile).
    static let rotateKey = RedisScript(name: "key-rotate", source: """
        local status = redis.call('HGET', KEYS[1], 'status')
        if status ~= 'active' then return 0 end
        local expires = redis.call('HGET', KEYS[1], 'expires_at')
        if expires and expires ~= '' and tonumber(expires) <= tonumber(ARGV[4]) then return 0 end
        redis.call('HSET', KEYS[1], 'status', 'expiring', 'expires_at', ARGV[1], 'rotated_to', ARGV[2])
        redis.call('PUBLISH', ARGV[3], 'key ' .. ARGV[5])
        return 1
        """)

    /// KEYS: the record. ARGV: channel, hash. Returns 1, 0 when there is no such key, or 2
    /// when it was already revoked (nothing is written or published then).
    static let revokeKey = RedisScript(name: "key-revoke", source: """
        local status = redis.call('HGET', KEYS[1], 'status')
        if not status then return 0 end
        if status == 'revoked' then return 2 end
        redis.call('HSET', KEYS[1], 'status', 'revoked')
        redis.call('PUBLISH', ARGV[1], 'key ' .. ARGV[2])
        return 1
        """)

    /// KEYS: the key's record. ARGV: channel, the key's hash, then field/value pairs to set.
    /// Returns 1, or 0 when there is no such key. Every instance drops its cached copy, so a
    /// new allowlist or quota applies everywhere as fast as a revocation does.
    static let updateKey = RedisScript(name: "key-update", source: """
        if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
        local fields = {}
        for i = 3, #ARGV do fields[#fields + 1] = ARGV[i] end
        redis.call('HSET', KEYS[1], unpack(fields))
        redis.call('PUBLISH', ARGV[1], 'key ' .. ARGV[2])
        return 1
        """)

    /// KEYS: the partner. ARGV: status, partner id. Returns 1, or 0 when there is no partner.
    static let setPartnerStatus = RedisScript(name: "partner-status", source: """
        if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
        redis.call('HSET', KEYS[1], 'status', ARGV[1])
        redis.call('PUBLISH', 'pg:invalidate', 'partner ' .. ARGV[2])
        return 1
        """)

    /// KEYS: the partner. ARGV: partner id, then field/value pairs to set. Returns 1, or 0
    /// when there is no partner. Every instance drops its cached copy of the partner, so its
    /// new name, limits and scopes apply everywhere as fast as a revocation does.
    static let updatePartner = RedisScript(name: "partner-update", source: """
        if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
        local fields = {}
        for i = 2, #ARGV do fields[#fields + 1] = ARGV[i] end
        redis.call('HSET', KEYS[1], unpack(fields))
        redis.call('PUBLISH', 'pg:invalidate', 'partner ' .. ARGV[1])
        return 1
        """)
}

extension RegistryScripts {
    /// KEYS: a lock. ARGV: the holder's token. Deletes the lock only while that holder has it
    /// (one that expired and was taken by another stays theirs).
    static let releaseLock = RedisScript(name: "lock-release", source: """
        if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
        return 0
        """)

    /// KEYS: the admin's record. Returns 1, 0 when there is no such admin, or 2 when it is
    /// already revoked (nothing is written then).
    static let revokeAdmin = RedisScript(name: "admin-revoke", source: """
        local status = redis.call('HGET', KEYS[1], 'status')
        if not status then return 0 end
        if status == 'revoked' then return 2 end
        redis.call('HSET', KEYS[1], 'status', 'revoked')
        return 1
        """)

    /// KEYS: the admin's record. ARGV: the new secret's hash, its start, the new expiry
    /// ('' for none, '-' to keep the current one), now.
    /// Returns `{'ok', old hash}`, `{'missing'}`, or `{'inactive'}` when revoked or expired.
    /// The old secret stops working in this step: verification compares `token_hash`.
    static let rotateAdmin = RedisScript(name: "admin-rotate", source: """
        local record = redis.call('HMGET', KEYS[1], 'status', 'expires_at', 'token_hash')
        if not record[1] then return {'missing'} end
        if record[1] ~= 'active' then return {'inactive'} end
        if record[2] and record[2] ~= '' and tonumber(record[2]) <= tonumber(ARGV[4]) then return {'inactive'} end
        redis.call('HSET', KEYS[1], 'token_hash', ARGV[1], 'start', ARGV[2])
        if ARGV[3] ~= '-' then redis.call('HSET', KEYS[1], 'expires_at', ARGV[3]) end
        return {'ok', record[3]}
        """)
}
