import NIOCore

/// One run of a script (its keys and arguments), encoded as `EVALSHA` once: a caller that makes
/// the same call again and again (a client connection's rate-limit check, request after
/// request) keeps it and pays for building the command and its RESP bytes once. A class, so
/// handing it along (once per rate-limited request) costs one reference, not one per field.
public final class RedisScriptCall: Sendable {
    public let script: RedisScript
    public let keys: [String]
    /// `EVALSHA <sha1> <number of keys> <keys> <arguments>` in RESP.
    let evalSHA: ByteBuffer
    /// How many bulk strings the command holds (name, script, key count, keys, arguments).
    private let elementCount: Int
    /// Where the key count's bulk string starts in ``evalSHA``: `EVAL` shares what follows.
    private let keyCountOffset: Int
    /// Where the last argument's bulk string starts in ``evalSHA`` (its end without one).
    private let lastArgumentOffset: Int
    /// The cluster slot every key hashes to (nil: no keys), or a failure when they span
    /// several: worked out once here, not on every run.
    let slot: Result<Int?, RedisError>

    public convenience init(_ script: RedisScript, keys: [String], arguments: [String]) throws(RedisError) {
        try self.init(script, keys: keys, bytes: arguments.map { Array($0.utf8) })
    }

    /// A call whose arguments are bytes rather than text (a sealed value), sent as they are.
    public convenience init(_ script: RedisScript, keys: [String], bytes arguments: [[UInt8]]) throws(RedisError) {
        let (evalSHA, keyCountOffset, lastArgumentOffset) = RedisCommand.scriptEncoding("EVALSHA", script.sha1, keys: keys, arguments: arguments)
        let slot = Result { () throws(RedisError) in try RedisClusterPool.commonSlot(of: keys, in: "script \(script.name)") }
        self.init(
            script: script, keys: keys, elementCount: 3 + keys.count + arguments.count, evalSHA: evalSHA,
            keyCountOffset: keyCountOffset, lastArgumentOffset: lastArgumentOffset, slot: slot
        )
    }

    private init(
        script: RedisScript, keys: [String], elementCount: Int, evalSHA: ByteBuffer, keyCountOffset: Int, lastArgumentOffset: Int,
        slot: Result<Int?, RedisError>
    ) {
        self.script = script
        self.keys = keys
        self.elementCount = elementCount
        self.evalSHA = evalSHA
        self.keyCountOffset = keyCountOffset
        self.lastArgumentOffset = lastArgumentOffset
        self.slot = slot
    }

    /// The arguments as sent, read back from the prepared bytes (after the name, the SHA-1,
    /// the key count and the keys).
    public var arguments: [[UInt8]] {
        Array((RESPArguments.decode(evalSHA) ?? []).dropFirst(3 + keys.count))
    }

    /// `EVAL <source> <number of keys> <keys> <arguments>`: the same call with the script's
    /// source, once Redis has lost it. What follows the source is copied from ``evalSHA``.
    var eval: ByteBuffer {
        RESPWriter.encode { resp in
            resp.array(elementCount)
            resp.bulk("EVAL")
            resp.bulk(script.source)
            resp.verbatim(evalSHA.readableBytesView[keyCountOffset...])
        }
    }

    /// The same call with its last argument replaced by `argument` (a count that varies from
    /// run to run, such as how many requests a token-bucket run decides): the prepared bytes
    /// are copied up to that argument and only it is encoded, with no formatting of the rest
    /// and no hashing of the keys again. The call must have an argument to replace.
    public func replacingLastArgument(with argument: String) -> RedisScriptCall {
        precondition(lastArgumentOffset < evalSHA.writerIndex, "a script call without arguments has none to replace")
        var start = 0
        let payload = RESPWriter.encode { resp in
            resp.verbatim(evalSHA.readableBytesView[..<lastArgumentOffset])
            start = resp.index
            resp.bulk(argument)
        }
        return RedisScriptCall(
            script: script, keys: keys, elementCount: elementCount, evalSHA: payload, keyCountOffset: keyCountOffset,
            lastArgumentOffset: start, slot: slot
        )
    }
}
