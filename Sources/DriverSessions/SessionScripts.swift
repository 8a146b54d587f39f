import RedisClient

/// The atomic steps of driver login: each checks state and writes in one script, so no
/// interleaving of requests can spend one OTP attempt or one refresh token twice (docs/public-api.md).
///
/// Time always comes from Redis `TIME`, so gateways with skewed clocks agree on expiries.
///
/// Redis Cluster safe: every script names every key it touches in KEYS (none builds a key
/// name) and each runs in one slot: its keys carry one hash tag, or (opening a session) ids
/// drawn so that their keys share a slot. Steps that change entities of several slots
/// (logout, revoking a user or a session) are made of several scripts, called by
/// ``SessionStore`` in an order that never leaves a state granting more access than before
/// (docs/DECISIONS.md, "Sessions on Redis Cluster").
enum SessionScripts {
    /// Shared Lua: the clock, and burying a family that does not exist (a revoked tombstone
    /// kept for `ttl` ms, so a login that listed the id but has not created it yet cannot).
    private static let prelude = """
        local function now_ms()
          local t = redis.call('TIME')
          return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
        end
        local function bury_if_missing(family, ttl)
          if redis.call('EXISTS', family) == 1 then return false end
          redis.call('HSET', family, 'state', 'revoked')
          redis.call('PEXPIRE', family, ttl)
          return true
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

    /// KEYS: the user, the user's session set, the new family, its first token's record, and
    /// on a first login the phone index (all in one slot: ``SessionStore`` draws a new
    /// user's id in the phone's slot and a family's id in its user's).
    /// ARGV: masked phone, partner id or '', driver id or '', name or '', the phone's digest
    /// (kept so an erasure can find the phone's keys), the family id, the user id, refresh
    /// TTL (ms), channel, token hash.
    /// Returns `{'ok', revoked_before or '', number of sessions in the set, first}`;
    /// `{'claimed', user}` when creating and the index names a user already (the login joins
    /// them), `{'taken'}` when creating and the candidate id exists, `{'gone'}` when joining
    /// a user that no longer exists (erased: the index entry is released and the login
    /// starts over), `{'clash'}` when the family id exists (a revoked tombstone or another
    /// session): the caller draws new ids. `first` is '1' when a partner had no driver id for
    /// this user before.
    ///
    /// One script, so the index never names a missing user and no working session is ever
    /// missing from the set "revoke every session" reads. A partner's driver id and name are
    /// kept per partner (`driver_id:P`, `name:P`): what one partner says about a driver never
    /// replaces what another partner or the driver set.
    static let openSession = RedisScript(name: "session-open", source: prelude + """
        local creating = #KEYS == 5
        if creating then
          local owner = redis.call('GET', KEYS[5])
          if owner then return {'claimed', owner} end
          if redis.call('EXISTS', KEYS[1]) == 1 then return {'taken'} end
        elseif redis.call('EXISTS', KEYS[1]) == 0 then
          return {'gone'}
        end
        if redis.call('EXISTS', KEYS[3]) == 1 then return {'clash'} end
        local now = tostring(now_ms())
        if creating then
          redis.call('HSET', KEYS[1], 'phone', ARGV[1], 'created_at', now)
          redis.call('SET', KEYS[5], ARGV[7])
        end
        redis.call('HSET', KEYS[1], 'phone_tag', ARGV[5])
        local first = '0'
        if ARGV[2] ~= '' then
          if redis.call('HEXISTS', KEYS[1], 'driver_id:' .. ARGV[2]) == 0 then first = '1' end
          if ARGV[3] ~= '' then redis.call('HSET', KEYS[1], 'driver_id:' .. ARGV[2], ARGV[3]) end
          if ARGV[4] ~= '' then redis.call('HSET', KEYS[1], 'name:' .. ARGV[2], ARGV[4]) end
        end
        redis.call('SADD', KEYS[2], ARGV[6])
        redis.call('HSET', KEYS[3], 'user', ARGV[7], 'state', 'active', 'current', ARGV[10],
          'channel', ARGV[9], 'partner', ARGV[2], 'created_at', now, 'refreshed_at', now)
        redis.call('PEXPIRE', KEYS[3], ARGV[8])
        redis.call('HSET', KEYS[4], 'state', 'active')
        redis.call('PEXPIRE', KEYS[4], ARGV[8])
        return {'ok', redis.call('HGET', KEYS[1], 'revoked_before') or '', redis.call('SCARD', KEYS[2]), first}
        """)

    /// KEYS: the presented token's record, its family, the successor's record, the family's
    /// spent tokens.
    /// ARGV: refresh TTL (ms), successor hash, presented hash, reuse interval (ms), how many
    /// spent hashes a family keeps.
    /// Returns `{'rotated' or 'retried', user, channel, partner}`, `{'reused', user}` or
    /// `{'refused'}`.
    ///
    /// An active token of an active family is spent and its successor stored in the same
    /// step: either both happen or neither. A spent token is reuse, except the one case a
    /// lost answer explains: the family's immediate predecessor, presented within the reuse
    /// interval after it was spent, while its successor (derived from it, so the caller
    /// recomputed the same one) is still the family's current token. That answers
    /// `retried` and changes nothing, so concurrent refreshes with one token all get the one
    /// current token. Reuse changes nothing here either: ``SessionStore`` revokes the session
    /// in the order that keeps it dead (the revocation set first, then this family).
    ///
    /// Token records hold only their state; whose they are is the family's `user` (one place
    /// to erase). Records written by older gateways also hold `user`, which is not read.
    /// A spent token's record expires a refresh TTL after it was issued, while its family
    /// lives on with each refresh: the spent set keeps its hash as long as the family (its
    /// newest ``spentTokensKept``), so its replay is still reuse after its record is gone.
    static let rotateRefreshToken = RedisScript(name: "refresh-rotate", source: prelude + """
        local token = redis.call('HGET', KEYS[1], 'state')
        if not token and redis.call('ZSCORE', KEYS[4], ARGV[3]) then token = 'used' end
        if not token then return {'refused'} end
        local family = redis.call('HMGET', KEYS[2], 'state', 'channel', 'partner', 'current', 'previous', 'refreshed_at', 'user')
        if family[1] ~= 'active' or not family[7] then return {'refused'} end
        local user = family[7]
        if token == 'active' then
          local clock = now_ms()
          local now = tostring(clock)
          redis.call('HSET', KEYS[1], 'state', 'used')
          redis.call('ZADD', KEYS[4], clock + math.max(redis.call('PTTL', KEYS[1]), 0), ARGV[3])
          redis.call('ZREMRANGEBYRANK', KEYS[4], 0, -(tonumber(ARGV[5]) + 1))
          redis.call('PEXPIRE', KEYS[4], ARGV[1])
          redis.call('HSET', KEYS[3], 'state', 'active')
          redis.call('PEXPIRE', KEYS[3], ARGV[1])
          redis.call('HSET', KEYS[2], 'current', ARGV[2], 'previous', ARGV[3], 'refreshed_at', now)
          redis.call('PEXPIRE', KEYS[2], ARGV[1])
          return {'rotated', user, family[2], family[3]}
        end
        if token == 'used' then
          local interval = tonumber(ARGV[4])
          if interval > 0 and family[5] == ARGV[3] and family[4] == ARGV[2]
            and now_ms() - tonumber(family[6]) <= interval then
            return {'retried', user, family[2], family[3]}
          end
          return {'reused', user}
        end
        return {'refused'}
        """)

    /// KEYS: the revoked-sessions set. ARGV: `pending` or `final`, how long revocations are
    /// kept (ms), then the family ids.
    ///
    /// `pending` lists the sessions with a score no trim ever reaches and publishes them, so
    /// every instance refuses their access tokens from now on; `final` (sent once each
    /// family is revoked in its own slot) gives them their real time, from which they are
    /// trimmed once every access token they cover has expired. A session whose family step
    /// never happened thus stays listed, and its refresh tokens only mint refused tokens
    /// (and get the family revoked on their next use).
    static let announceSessions = RedisScript(name: "sessions-announce", source: prelude + """
        local now = now_ms()
        local score = tostring(now)
        if ARGV[1] == 'pending' then score = '\(SessionKeys.pendingRevocationScore)' end
        for i = 3, #ARGV do
          redis.call('ZADD', KEYS[1], score, ARGV[i])
          if ARGV[1] == 'pending' then
            redis.call('PUBLISH', '\(SessionKeys.invalidationChannel)', 'session ' .. ARGV[i] .. ' ' .. tostring(now))
          end
        end
        redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', '(' .. tostring(now - tonumber(ARGV[2])))
        return tostring(now)
        """)

    /// KEYS: a family. ARGV: the user it must belong to, or '' for any; how long to keep a
    /// tombstone (ms).
    /// Returns 1 when revoked (or already revoked), -1 when it belongs to another user, and
    /// 0 when there was no such family: then a revoked tombstone is left, so a login that
    /// listed this id but has not created it yet cannot create it any more.
    static let revokeFamily = RedisScript(name: "session-revoke-family", source: prelude + """
        if bury_if_missing(KEYS[1], ARGV[2]) then return 0 end
        if ARGV[1] ~= '' and redis.call('HGET', KEYS[1], 'user') ~= ARGV[1] then return -1 end
        redis.call('HSET', KEYS[1], 'state', 'revoked', 'revoked_at', tostring(now_ms()))
        return 1
        """)

    /// KEYS: a family. ARGV: how long to keep a tombstone (ms).
    /// Returns 1 when the family exists; else leaves a revoked tombstone and returns 0.
    static let buryIfMissing = RedisScript(name: "session-bury", source: prelude + """
        if bury_if_missing(KEYS[1], ARGV[1]) then return 0 end
        return 1
        """)

    /// KEYS: the user, the user's session set.
    /// Returns `{revocation time (ms), family ids...}`, or `{}` when there is no such user.
    /// The user's `revoked_before` marker makes every later login wait past this moment;
    /// ``SessionStore`` then announces the user and the sessions, and revokes each family.
    static let markUserRevoked = RedisScript(name: "user-revoke", source: prelude + """
        if redis.call('EXISTS', KEYS[1]) == 0 then return {} end
        local now = tostring(now_ms())
        redis.call('HSET', KEYS[1], 'revoked_before', now)
        local reply = {now}
        for _, f in ipairs(redis.call('SMEMBERS', KEYS[2])) do reply[#reply + 1] = f end
        return reply
        """)

    /// KEYS: the revoked-users set. ARGV: user id, revocation time (ms), how long
    /// revocations are kept (ms).
    static let announceUser = RedisScript(name: "user-announce", source: """
        redis.call('ZADD', KEYS[1], ARGV[2], ARGV[1])
        redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', '(' .. tostring(tonumber(ARGV[2]) - tonumber(ARGV[3])))
        redis.call('PUBLISH', '\(SessionKeys.invalidationChannel)', 'user ' .. ARGV[1] .. ' ' .. ARGV[2])
        return 1
        """)

    /// KEYS: the phone index. ARGV: the user id it must still name.
    /// Deletes the index entry when it names that user (an erased one); returns 1 if it did.
    static let releasePhone = RedisScript(name: "phone-release", source: """
        if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
        redis.call('DEL', KEYS[1])
        return 1
        """)

    /// KEYS: a family, its spent tokens, then the records of the tokens the caller read there
    /// (current, previous, spent). ARGV: how long to keep the tombstone (ms), then those
    /// tokens' hashes.
    /// Replaces the family with a bare revoked tombstone (no user, no token hashes) and
    /// deletes the token records: an erased user's sessions end and name nobody. Returns the
    /// hashes the family held that the caller did not pass (a rotation since its read), whose
    /// records it deletes next: the tombstone allows no further rotation.
    static let eraseFamily = RedisScript(name: "session-erase-family", source: """
        local known = {}
        for i = 2, #ARGV do known[ARGV[i]] = true end
        local late = {}
        local function note(hash)
          if hash and hash ~= '' and not known[hash] then
            known[hash] = true
            late[#late + 1] = hash
          end
        end
        for _, hash in ipairs(redis.call('HMGET', KEYS[1], 'current', 'previous')) do note(hash) end
        for _, hash in ipairs(redis.call('ZRANGE', KEYS[2], 0, -1)) do note(hash) end
        redis.call('DEL', unpack(KEYS))
        redis.call('HSET', KEYS[1], 'state', 'revoked')
        redis.call('PEXPIRE', KEYS[1], ARGV[1])
        return late
        """)

    /// KEYS: the user, the user's session set.
    /// Deletes both; returns the sessions the set still held (joined since the caller read
    /// it), or `{}` when there was no user.
    static let eraseUser = RedisScript(name: "user-erase", source: """
        if redis.call('EXISTS', KEYS[1]) == 0 then return {} end
        local reply = {'erased'}
        for _, f in ipairs(redis.call('SMEMBERS', KEYS[2])) do reply[#reply + 1] = f end
        redis.call('DEL', KEYS[1], KEYS[2])
        return reply
        """)
}
