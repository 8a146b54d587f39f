import RedisClient

/// The atomic steps of the registry: each checks state and writes in one script, and publishes
/// the cache invalidation in the same step, so no instance can keep verifying a key that a
/// returned admin command ended.
///
/// Redis Cluster safe: each script touches one key, named in KEYS. A rotation, which changes
/// two keys' records (two hash tags), is two steps in ``KeyRegistry/rotateKey(id:grace:revision:by:now:)``.
enum RegistryScripts {
    /// KEYS: the old key's record.
    /// ARGV: its new expiry, the new key's id, the channel, now, the old key's hash, the
    /// revision it must be at ('' for any).
    /// Returns 1, 0 when the old key is no longer active (revoked, rotated or expired
    /// meanwhile), or -1 when it is not at that revision.
    static let rotateKey = RedisScript(name: "key-rotate", source: """
        local record = redis.call('HMGET', KEYS[1], 'status', 'expires_at', 'rev')
        if record[1] ~= 'active' then return 0 end
        if record[2] and record[2] ~= '' and tonumber(record[2]) <= tonumber(ARGV[4]) then return 0 end
        if ARGV[6] ~= '' and tonumber(ARGV[6]) ~= tonumber(record[3] or '0') then return -1 end
        redis.call('HSET', KEYS[1], 'status', 'expiring', 'expires_at', ARGV[1], 'rotated_to', ARGV[2])
        redis.call('HINCRBY', KEYS[1], 'rev', 1)
        redis.call('PUBLISH', ARGV[3], 'key ' .. ARGV[5])
        return 1
        """)

    /// KEYS: the record. ARGV: channel, hash, the revision it must be at ('' for any).
    /// Returns 1, 0 when there is no such key, 2 when it was already revoked, or -1 when it is
    /// not at that revision (nothing is written or published then).
    static let revokeKey = RedisScript(name: "key-revoke", source: """
        local record = redis.call('HMGET', KEYS[1], 'status', 'rev')
        if not record[1] then return 0 end
        if ARGV[3] ~= '' and tonumber(ARGV[3]) ~= tonumber(record[2] or '0') then return -1 end
        if record[1] == 'revoked' then return 2 end
        redis.call('HSET', KEYS[1], 'status', 'revoked')
        redis.call('HINCRBY', KEYS[1], 'rev', 1)
        redis.call('PUBLISH', ARGV[1], 'key ' .. ARGV[2])
        return 1
        """)

    /// KEYS: the key's record. ARGV: channel, the key's hash, the revision it must be at (''
    /// for any), then field/value pairs to set. Returns 1, 0 when there is no such key, or -1
    /// when it is not at that revision. Every instance drops its cached copy, so a new
    /// allowlist or quota applies everywhere as fast as a revocation does.
    static let updateKey = RedisScript(name: "key-update", source: """
        return \(changeRecord("'key ' .. ARGV[2]", channel: "ARGV[1]", expected: 3))
        """)

    /// KEYS: the partner. ARGV: partner id, the revision it must be at ('' for any), then
    /// field/value pairs to set. Returns 1, 0 when there is no partner, or -1 when it is not
    /// at that revision. Every instance drops its cached copy of the partner, so its new name,
    /// limits, scopes and status apply everywhere as fast as a revocation does.
    static let updatePartner = RedisScript(name: "partner-update", source: """
        return \(changeRecord("'partner ' .. ARGV[1]", channel: "'pg:invalidate'", expected: 2))
        """)

    /// KEYS: a key id's index. ARGV: the key hash it must still name ('' for none), the new
    /// key's hash. Returns 1 when it now names the new key, else 0 (nothing written).
    static let takeOverKeyID = RedisScript(name: "key-id-take-over", source: """
        if (redis.call('GET', KEYS[1]) or '') ~= ARGV[1] then return 0 end
        redis.call('SET', KEYS[1], ARGV[2])
        return 1
        """)

    /// KEYS: the partner. ARGV: field/value pairs. Returns 1, or 0 when a partner with that id
    /// exists already (nothing is written then).
    static let createPartner = RedisScript(name: "partner-create", source: """
        if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
        redis.call('HSET', KEYS[1], unpack(ARGV))
        return 1
        """)

    /// The body of a change to one record: the record must exist and be at the revision in
    /// `ARGV[expected]` (when not empty); the fields from `ARGV[expected + 1]` on are set, the
    /// revision counted up and the invalidation published, in one step.
    private static func changeRecord(_ message: String, channel: String, expected: Int) -> String {
        """
        (function()
          if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
          local expected = ARGV[\(expected)]
          if expected ~= '' and tonumber(expected) ~= tonumber(redis.call('HGET', KEYS[1], 'rev') or '0') then return -1 end
          local fields = {}
          for i = \(expected + 1), #ARGV do fields[#fields + 1] = ARGV[i] end
          redis.call('HSET', KEYS[1], unpack(fields))
          redis.call('HINCRBY', KEYS[1], 'rev', 1)
          redis.call('PUBLISH', \(channel), \(message))
          return 1
        end)()
        """
    }
}

extension RegistryScripts {
    /// KEYS: a lock. ARGV: the holder's token. Deletes the lock only while that holder has it
    /// (one that expired and was taken by another stays theirs).
    static let releaseLock = RedisScript(name: "lock-release", source: """
        if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
        return 0
        """)

    /// KEYS: the admin's record. ARGV: the revision it must be at ('' for any). Returns 1, 0
    /// when there is no such admin, 2 when it is already revoked, or -1 when it is not at that
    /// revision (nothing is written then).
    static let revokeAdmin = RedisScript(name: "admin-revoke", source: """
        local record = redis.call('HMGET', KEYS[1], 'status', 'rev')
        if not record[1] then return 0 end
        if ARGV[1] ~= '' and tonumber(ARGV[1]) ~= tonumber(record[2] or '0') then return -1 end
        if record[1] == 'revoked' then return 2 end
        redis.call('HSET', KEYS[1], 'status', 'revoked')
        redis.call('HINCRBY', KEYS[1], 'rev', 1)
        return 1
        """)

    /// KEYS: the admin's record. ARGV: the new secret's hash, its start, the new expiry
    /// ('' for none, '-' to keep the current one), now, the revision it must be at ('' for
    /// any). Returns `{'ok', old hash}`, `{'missing'}`, `{'inactive'}` when revoked or expired,
    /// or `{'stale'}` when not at that revision.
    /// The old secret stops working in this step: verification compares `token_hash`.
    static let rotateAdmin = RedisScript(name: "admin-rotate", source: """
        local record = redis.call('HMGET', KEYS[1], 'status', 'expires_at', 'token_hash', 'rev')
        if not record[1] then return {'missing'} end
        if ARGV[5] ~= '' and tonumber(ARGV[5]) ~= tonumber(record[4] or '0') then return {'stale'} end
        if record[1] ~= 'active' then return {'inactive'} end
        if record[2] and record[2] ~= '' and tonumber(record[2]) <= tonumber(ARGV[4]) then return {'inactive'} end
        redis.call('HSET', KEYS[1], 'token_hash', ARGV[1], 'start', ARGV[2])
        if ARGV[3] ~= '-' then redis.call('HSET', KEYS[1], 'expires_at', ARGV[3]) end
        redis.call('HINCRBY', KEYS[1], 'rev', 1)
        return {'ok', record[3]}
        """)

    /// KEYS: the admin's record. ARGV: field/value pairs. Returns 1, or 0 when a credential
    /// with that id exists already (nothing is written then).
    static let createAdmin = RedisScript(name: "admin-create", source: """
        if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
        redis.call('HSET', KEYS[1], unpack(ARGV))
        return 1
        """)
}
