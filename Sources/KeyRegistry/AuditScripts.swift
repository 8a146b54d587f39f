import RedisClient

/// The audit trail's one atomic step (``AuditChainWriter``).
enum AuditScripts {
    /// KEYS: the audit stream.
    /// ARGV: the head's hash and number the batch was hashed against ('' and 0 for an empty
    /// or pre-chain trail), the trail's maximum length, then each entry's field/value pairs
    /// (``AuditLog/fields(of:)``, a fixed number per entry).
    /// Returns `{'ok', id...}`, or `{'moved', hash, seq}` with the real head when the newest
    /// entry is not the one expected (nothing is written then).
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
          reply[#reply + 1] = redis.call('XADD', KEYS[1], 'MAXLEN', '~', ARGV[3], '*', unpack(ARGV, start, start + width - 1))
        end
        return reply
        """)
}
