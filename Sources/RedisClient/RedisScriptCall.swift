import NIOCore

/// One run of a script (its keys and arguments), encoded as `EVALSHA` once: a caller that makes
/// the same call again and again (a client connection's rate-limit check, request after
/// request) keeps it and pays for building the command and its RESP bytes once. A class, so
/// handing it along (once per rate-limited request) costs one reference, not one per field.
public final class RedisScriptCall: Sendable {
    public let script: RedisScript
    public let keys: [String]
    /// The arguments as sent, each an exact byte string (binary safe).
    public let arguments: [[UInt8]]
    /// `EVALSHA <sha1> <number of keys> <keys> <arguments>` in RESP.
    let evalSHA: ByteBuffer
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
        var payload = ByteBufferAllocator().buffer(capacity: 128 + arguments.reduce(0) { $0 + $1.count })
        RedisCommand.evalsha(script, keys: keys, bytes: arguments).encode(into: &payload)
        let lastArgumentOffset = payload.writerIndex - (arguments.last.map { Self.bulkStringLength($0.count) } ?? 0)
        self.init(
            script: script, keys: keys, arguments: arguments, evalSHA: payload, lastArgumentOffset: lastArgumentOffset,
            slot: Result { () throws(RedisError) in
                try RedisClusterPool.commonSlot(of: keys.map(RedisHashSlot.of), in: "script \(script.name)")
            }
        )
    }

    private init(
        script: RedisScript, keys: [String], arguments: [[UInt8]], evalSHA: ByteBuffer, lastArgumentOffset: Int,
        slot: Result<Int?, RedisError>
    ) {
        self.script = script
        self.keys = keys
        self.arguments = arguments
        self.evalSHA = evalSHA
        self.lastArgumentOffset = lastArgumentOffset
        self.slot = slot
    }

    /// The same call with its last argument replaced by `argument` (a count that varies from
    /// run to run, such as how many requests a token-bucket run decides): the prepared bytes
    /// are copied up to that argument and only it is encoded, with no formatting of the rest
    /// and no hashing of the keys again. The call must have an argument to replace.
    public func replacingLastArgument(with argument: String) -> RedisScriptCall {
        precondition(!arguments.isEmpty, "a script call without arguments has none to replace")
        var payload = ByteBufferAllocator().buffer(capacity: lastArgumentOffset + Self.bulkStringLength(argument.utf8.count))
        payload.writeImmutableBuffer(evalSHA.getSlice(at: evalSHA.readerIndex, length: lastArgumentOffset - evalSHA.readerIndex)!)
        let start = payload.writerIndex
        payload.writeStaticString("$")
        payload.writeString(String(argument.utf8.count))
        payload.writeStaticString("\r\n")
        payload.writeString(argument)
        payload.writeStaticString("\r\n")
        var arguments = self.arguments
        arguments[arguments.count - 1] = Array(argument.utf8)
        return RedisScriptCall(
            script: script, keys: keys, arguments: arguments, evalSHA: payload, lastArgumentOffset: start, slot: slot
        )
    }

    /// The bytes of a value of `length` bytes as a RESP bulk string: `$<length>\r\n<value>\r\n`.
    private static func bulkStringLength(_ length: Int) -> Int {
        1 + String(length).utf8.count + 2 + length + 2
    }
}
