import RedisClient

/// The atomic steps of partners' members and their portal sessions. Each script runs in one
/// slot: a member's record, session set and sessions share the member's hash tag, so checking a
/// session against its member (removed? which role?) is one step on Redis Cluster too. Time
/// comes from Redis `TIME`, so instances with skewed clocks agree on expiries.
enum MemberScripts {
    private static let clock = """
        local function now_ms()
          local t = redis.call('TIME')
          return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
        end

        """

    /// KEYS: an email's index entry. ARGV: the new member id, the id it may replace ('' for
    /// none: an entry left by a member whose record is gone). Returns 1, or 0 when the entry
    /// names someone else (another invitation won the address meanwhile).
    static let claimEmail = RedisScript(name: "member-claim-email", source: """
        local holder = redis.call('GET', KEYS[1])
        if holder and holder ~= ARGV[2] then return 0 end
        redis.call('SET', KEYS[1], ARGV[1])
        return 1
        """)

    /// KEYS: an email's index entry. ARGV: the member id. Deletes the entry only while it names
    /// that member (the address may have been invited again since).
    static let releaseEmail = RedisScript(name: "member-release-email", source: """
        if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
        return 0
        """)

    /// KEYS: the member's record. ARGV: field/value pairs. Returns 1, or 0 when a member with
    /// that id exists already (nothing is written then).
    static let create = RedisScript(name: "member-create", source: """
        if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
        redis.call('HSET', KEYS[1], unpack(ARGV))
        return 1
        """)

    /// KEYS: the member's record. ARGV: the revision it must be at ('' for any), then
    /// field/value pairs to set. Returns 1, 0 when there is no such member, or -1 when it is
    /// not at that revision (nothing is written then); the revision counts up with the change.
    static let update = RedisScript(name: "member-update", source: """
        if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
        if ARGV[1] ~= '' and tonumber(ARGV[1]) ~= tonumber(redis.call('HGET', KEYS[1], 'rev') or '0') then return -1 end
        local fields = {}
        for i = 2, #ARGV do fields[#fields + 1] = ARGV[i] end
        redis.call('HSET', KEYS[1], unpack(fields))
        redis.call('HINCRBY', KEYS[1], 'rev', 1)
        return 1
        """)

    /// KEYS: the member's record, their session set, then each session the set named.
    /// ARGV: the revision the member must be at ('' for any). Deletes them all in one step:
    /// from it on, no session of theirs opens anything (a session opened meanwhile finds no
    /// record). Returns 1, 0 when there is no such member, or -1 when it is not at that
    /// revision (nothing is deleted then).
    static let remove = RedisScript(name: "member-remove", source: """
        if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
        if ARGV[1] ~= '' and tonumber(ARGV[1]) ~= tonumber(redis.call('HGET', KEYS[1], 'rev') or '0') then return -1 end
        redis.call('DEL', unpack(KEYS))
        return 1
        """)

    /// KEYS: the member's session set, then each session it named. Ends every session of the
    /// member (their partner was disabled). Returns how many keys went.
    static let endSessions = RedisScript(name: "member-end-sessions", source: """
        return redis.call('DEL', unpack(KEYS))
        """)

    /// KEYS: the member's record, their session set, the new session.
    /// ARGV: idle lifetime (ms), absolute lifetime (ms), the session's hash.
    /// Returns the session's absolute end (ms), or 0 when the member is gone.
    static let openSession = RedisScript(name: "portal-session-open", source: clock + """
        if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
        local now = now_ms()
        local expires = now + tonumber(ARGV[2])
        redis.call('HSET', KEYS[3], 'created_at', tostring(now), 'expires_at', tostring(expires))
        redis.call('PEXPIRE', KEYS[3], ARGV[1])
        redis.call('SADD', KEYS[2], ARGV[3])
        redis.call('PEXPIRE', KEYS[2], ARGV[2])
        return expires
        """)

    /// KEYS: the session, its member's record. ARGV: idle lifetime (ms).
    /// Returns `{'ok', expires_at, member's field/value pairs...}` and starts the idle time
    /// again (the key's expiry, never past the absolute end: the stored value is unchanged),
    /// or `{'none'}` when the session or its member is gone or its time is up.
    static let checkSession = RedisScript(name: "portal-session-check", source: clock + """
        local expires = redis.call('HGET', KEYS[1], 'expires_at')
        if not expires then return {'none'} end
        local member = redis.call('HGETALL', KEYS[2])
        if #member == 0 then return {'none'} end
        local left = tonumber(expires) - now_ms()
        if left <= 0 then return {'none'} end
        redis.call('PEXPIRE', KEYS[1], math.min(tonumber(ARGV[1]), left))
        local reply = {'ok', expires}
        for i = 1, #member do reply[#reply + 1] = member[i] end
        return reply
        """)

    /// KEYS: the session, its member's session set. ARGV: the session's hash. Signs out.
    static let closeSession = RedisScript(name: "portal-session-close", source: """
        redis.call('SREM', KEYS[2], ARGV[1])
        return redis.call('DEL', KEYS[1])
        """)
}
