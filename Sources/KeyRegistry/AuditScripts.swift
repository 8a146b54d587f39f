import RedisClient

/// The audit trail's one atomic step (``AuditChainWriter``).
enum AuditScripts {
    /// KEYS: the trail's stream, its trim record (``RegistryKeys/auditTrimmed(_:)``).
    /// ARGV: the head's hash and number the batch was hashed against ('' and 0 for an empty
    /// or pre-chain trail), the trail's maximum length, then each entry's field/value pairs
    /// (``AuditLog/fields(of:)``, a fixed number per entry).
    /// Returns `{'ok', id...}`, or `{'moved', hash, seq}` with the real head when the newest
    /// entry is not the one expected (nothing is written then).
    ///
    /// Past the maximum, the oldest entries are trimmed exactly, and the record gains their
    /// count and the last one's number and hash: what the first entry kept must follow, so a
    /// check tells this trimming from entries removed by anyone else.
    static let append = RedisScript(name: "audit-append", source: """
        local prev, seq = '', '0'
        local newest = redis.call('XREVRANGE', KEYS[1], '+', '-', 'COUNT', 1)[1]
        if newest then
          local fields = newest[2]
          for i = 1, #fields, 2 do
            if fields[i] == 'hash' then prev = fields[i + 1] elseif fields[i] == 'seq' then seq = fields[i + 1] end
          end
        end
        if prev ~= ARGV[1] or seq ~= ARGV[2] then return {'moved', prev, seq} end
        local width = \(AuditLog.fieldCount)
        local reply = {'ok'}
        for start = 4, #ARGV, width do
          reply[#reply + 1] = redis.call('XADD', KEYS[1], '*', unpack(ARGV, start, start + width - 1))
        end
        local over = redis.call('XLEN', KEYS[1]) - tonumber(ARGV[3])
        if over > 0 then
          local gone = redis.call('XRANGE', KEYS[1], '-', '+', 'COUNT', over)
          for _, entry in ipairs(gone) do
            local fields, lastSeq, lastHash = entry[2], nil, nil
            for i = 1, #fields, 2 do
              if fields[i] == 'hash' then lastHash = fields[i + 1] elseif fields[i] == 'seq' then lastSeq = fields[i + 1] end
            end
            if lastHash and lastHash ~= '' then redis.call('HSET', KEYS[2], 'seq', lastSeq, 'hash', lastHash) end
            redis.call('XDEL', KEYS[1], entry[1])
          end
          redis.call('HINCRBY', KEYS[2], 'entries', #gone)
        end
        return reply
        """)

    /// KEYS: a partner's index of its own entries (``RegistryKeys/partnerAudit(_:)``).
    /// ARGV: the entry's time (ms), `<trail>:<id>`, how many the index keeps. The oldest past
    /// that go in the same step.
    static let indexForPartner = RedisScript(name: "audit-partner-index", source: """
        redis.call('ZADD', KEYS[1], ARGV[1], ARGV[2])
        local over = redis.call('ZCARD', KEYS[1]) - tonumber(ARGV[3])
        if over > 0 then redis.call('ZREMRANGEBYRANK', KEYS[1], 0, over - 1) end
        return 1
        """)
}
