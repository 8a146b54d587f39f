import RedisClient

/// The atomic steps of driver login: each checks state and writes in one script, so no
/// interleaving of requests can spend one OTP attempt or one refresh token twice (SPEC 2.1).
///
/// Time always comes from Redis `TIME`, so gateways with skewed clocks agree on expiries.
///
/// The OTP scripts and the rotation script stay inside one hash tag (one phone, one
/// session). Opening a session, logging out and revoking a user touch several entities (the
/// phone index, the user, a session, the revocation sets) and build some key names inside
/// the script: one Redis primary (with replicas or Sentinel, or a managed Redis) runs them
/// atomically; on Redis Cluster they would have to be split per slot (see docs/DECISIONS.md).
enum SessionScripts {
    /// Shared Lua: the clock, and revoking one session (family) with its current token.
    private static let prelude = """
        local function now_ms()
          local t = redis.call('TIME')
          return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
        end
        local function revoke_family(f, now, trim_before, announce)
          local family = 'pg:rtfam:{' .. f .. '}'
          local current = redis.call('HGET', family, 'current')
          if current then
            redis.call('HSET', family, 'state', 'revoked')
            local token = 'pg:rt:{' .. f .. '}:' .. current
            if redis.call('EXISTS', token) == 1 then redis.call('HSET', token, 'state', 'revoked') end
          end
          if announce then
            redis.call('ZADD', 'pg:revoked-sessions', tostring(now), f)
            redis.call('ZREMRANGEBYSCORE', 'pg:revoked-sessions', '-inf', '(' .. tostring(trim_before))
            redis.call('PUBLISH', 'pg:invalidate', 'session ' .. f .. ' ' .. tostring(now))
          end
        end

        """

    /// KEYS: the OTP. ARGV: code digest, how long to keep the record (ms).
    /// Replaces any previous OTP of the phone (attempts start again; the daily failure count
    /// lives in its own key and is untouched).
    static let storeOTP = RedisScript(name: "otp-store", source: prelude + """
        local now = now_ms()
        redis.call('DEL', KEYS[1])
        redis.call('HSET', KEYS[1], 'digest', ARGV[1], 'created_at', tostring(now), 'attempts', '0')
        redis.call('PEXPIRE', KEYS[1], ARGV[2])
        return 1
        """)

    /// KEYS: the OTP, the phone's failure counter.
    /// ARGV: presented digest, OTP lifetime (ms), attempts per OTP, failures per window,
    /// window (ms).
    /// Returns `{verdict, attempts_left}`; verdict is `accepted`, `wrong`, `locked`,
    /// `expired`, `missing` or `daily_limit`. Only a wrong code counts: it bumps both the
    /// OTP's attempts and the phone's failures, and the attempt that reaches the limit locks
    /// the OTP.
    static let checkOTP = RedisScript(name: "otp-check", source: prelude + """
        local failures = tonumber(redis.call('GET', KEYS[2]) or '0')
        if failures >= tonumber(ARGV[4]) then return {'daily_limit', 0} end
        local otp = redis.call('HMGET', KEYS[1], 'digest', 'created_at', 'attempts')
        if not otp[1] then return {'missing', 0} end
        local max = tonumber(ARGV[3])
        local attempts = tonumber(otp[3])
        if attempts >= max then return {'locked', 0} end
        if now_ms() - tonumber(otp[2]) >= tonumber(ARGV[2]) then return {'expired', 0} end
        if otp[1] == ARGV[1] then
          redis.call('DEL', KEYS[1])
          return {'accepted', 0}
        end
        attempts = attempts + 1
        redis.call('HSET', KEYS[1], 'attempts', tostring(attempts))
        if redis.call('INCR', KEYS[2]) == 1 then redis.call('PEXPIRE', KEYS[2], ARGV[5]) end
        if attempts >= max then return {'locked', 0} end
        return {'wrong', max - attempts}
        """)

    /// KEYS: the phone index, the new family, the new token's record.
    /// ARGV: candidate user id, masked phone, refresh TTL (ms), channel, partner id or '',
    /// driver id or '', name or '', family id, token hash.
    /// Returns `{user_id, is_new (0/1), revoked_before or ''}`, or `{'', 0, ''}` when the
    /// candidate id is already taken (the caller retries with another).
    ///
    /// The user is created with the phone index in the same step, so neither can exist
    /// without the other. Up to 8 random members of the user's session set are checked and
    /// dropped if their family has expired: constant work per login that keeps the set close
    /// to the user's live sessions, however many logins a partner mints for one driver.
    static let openSession = RedisScript(name: "session-open", source: prelude + """
        local uid = redis.call('GET', KEYS[1])
        local new = 0
        local now = now_ms()
        if not uid then
          uid = ARGV[1]
          if redis.call('EXISTS', 'pg:user:{' .. uid .. '}') == 1 then return {'', 0, ''} end
          new = 1
          redis.call('SET', KEYS[1], uid)
          redis.call('HSET', 'pg:user:{' .. uid .. '}', 'phone', ARGV[2], 'created_at', tostring(now))
        end
        local user = 'pg:user:{' .. uid .. '}'
        if ARGV[6] ~= '' then redis.call('HSET', user, 'driver_id:' .. ARGV[5], ARGV[6]) end
        if ARGV[7] ~= '' then redis.call('HSET', user, 'name', ARGV[7]) end
        local sessions = user .. ':sessions'
        for _, f in ipairs(redis.call('SRANDMEMBER', sessions, 8)) do
          if redis.call('EXISTS', 'pg:rtfam:{' .. f .. '}') == 0 then redis.call('SREM', sessions, f) end
        end
        redis.call('SADD', sessions, ARGV[8])
        redis.call('HSET', KEYS[2], 'user', uid, 'state', 'active', 'current', ARGV[9],
          'channel', ARGV[4], 'partner', ARGV[5], 'created_at', tostring(now))
        redis.call('PEXPIRE', KEYS[2], ARGV[3])
        redis.call('HSET', KEYS[3], 'user', uid, 'state', 'active')
        redis.call('PEXPIRE', KEYS[3], ARGV[3])
        return {uid, new, redis.call('HGET', user, 'revoked_before') or ''}
        """)

    /// KEYS: the presented token's record, its family, the successor's record.
    /// ARGV: refresh TTL (ms), family id, successor hash, how long revocations are kept (ms).
    /// Returns `{'rotated', user, channel, partner}`, `{'reused', user}` or `{'refused'}`.
    ///
    /// An active token of an active family is spent and its successor stored in the same
    /// step: either both happen or neither. A spent token presented again means it was
    /// copied, so the whole family (every token descended from the login) is revoked.
    static let rotateRefreshToken = RedisScript(name: "refresh-rotate", source: prelude + """
        local token = redis.call('HMGET', KEYS[1], 'user', 'state')
        if not token[1] then return {'refused'} end
        local family = redis.call('HMGET', KEYS[2], 'state', 'channel', 'partner')
        if family[1] ~= 'active' then return {'refused'} end
        if token[2] == 'active' then
          redis.call('HSET', KEYS[1], 'state', 'used')
          redis.call('HSET', KEYS[3], 'user', token[1], 'state', 'active')
          redis.call('PEXPIRE', KEYS[3], ARGV[1])
          redis.call('HSET', KEYS[2], 'current', ARGV[3])
          redis.call('PEXPIRE', KEYS[2], ARGV[1])
          return {'rotated', token[1], family[2], family[3]}
        end
        if token[2] == 'used' then
          local now = now_ms()
          revoke_family(ARGV[2], now, now - tonumber(ARGV[4]), true)
          return {'reused', token[1]}
        end
        return {'refused'}
        """)

    /// KEYS: the access token's family, the presented refresh token's record (or the family
    /// key again when none was presented).
    /// ARGV: user id, the access token's session id, how long revocations are kept (ms), the
    /// presented token's family id or ''.
    /// Revokes the access token's session, and the presented refresh token's session when it
    /// belongs to the same user. Returns how many sessions were revoked.
    static let logout = RedisScript(name: "session-logout", source: prelude + """
        local now = now_ms()
        local trim = now - tonumber(ARGV[3])
        revoke_family(ARGV[2], now, trim, true)
        if ARGV[4] ~= '' and ARGV[4] ~= ARGV[2] then
          if redis.call('HGET', KEYS[2], 'user') == ARGV[1] then
            revoke_family(ARGV[4], now, trim, true)
            return 2
          end
        end
        return 1
        """)

    /// KEYS: the user, the user's session set.
    /// ARGV: user id, how long revocations are kept (ms).
    /// Returns the revocation time (ms) as a string, or '' when there is no such user.
    /// Every session's refresh tokens die here; access tokens die through the user's
    /// `revoked_before` marker, which every instance caches from the published message.
    static let revokeUser = RedisScript(name: "user-revoke", source: prelude + """
        if redis.call('EXISTS', KEYS[1]) == 0 then return '' end
        local now = now_ms()
        redis.call('HSET', KEYS[1], 'revoked_before', tostring(now))
        redis.call('ZADD', 'pg:revoked-users', tostring(now), ARGV[1])
        redis.call('ZREMRANGEBYSCORE', 'pg:revoked-users', '-inf', '(' .. tostring(now - tonumber(ARGV[2])))
        for _, f in ipairs(redis.call('SMEMBERS', KEYS[2])) do revoke_family(f, now, 0, false) end
        redis.call('DEL', KEYS[2])
        redis.call('PUBLISH', 'pg:invalidate', 'user ' .. ARGV[1] .. ' ' .. tostring(now))
        return tostring(now)
        """)
}
