import NIOCore

/// One run of a script (its keys and arguments), encoded as `EVALSHA` once: a caller that makes
/// the same call again and again (a client connection's rate-limit check, request after
/// request) keeps it and pays for building the command and its RESP bytes once.
public struct RedisScriptCall: Sendable {
    public let script: RedisScript
    public let keys: [String]
    public let arguments: [String]
    /// `EVALSHA <sha1> <number of keys> <keys> <arguments>` in RESP, as hiredis formats it.
    let evalSHA: ByteBuffer
    /// The cluster slot every key hashes to (nil: no keys), or a failure when they span
    /// several: worked out once here, not on every run.
    let slot: Result<Int?, RedisError>

    public init(_ script: RedisScript, keys: [String], arguments: [String]) throws(RedisError) {
        self.script = script
        self.keys = keys
        self.arguments = arguments
        var payload = ByteBufferAllocator().buffer(capacity: 128)
        try Hiredis.format(script.evalSHA(keys: keys, arguments: arguments), into: &payload)
        evalSHA = payload
        slot = Result { () throws(RedisError) in
            try RedisConnectionPool.commonSlot(of: keys.map(RedisHashSlot.of), in: "script \(script.name)")
        }
    }
}
