import NIOCore

/// Scripts: `EVALSHA`, and `EVAL` when Redis lost the script (``RedisScript``).
extension RedisCommand {
    public static func evalsha(_ script: RedisScript, keys: [String], arguments: [String]) -> RedisCommand {
        scriptCommand("EVALSHA", script.sha1, keys: keys, arguments: arguments)
    }

    public static func evalsha(_ script: RedisScript, keys: [String], bytes arguments: [[UInt8]]) -> RedisCommand {
        scriptCommand("EVALSHA", script.sha1, keys: keys, arguments: arguments)
    }

    public static func eval(_ script: RedisScript, keys: [String], arguments: [String]) -> RedisCommand {
        scriptCommand("EVAL", script.source, keys: keys, arguments: arguments)
    }

    public static func eval(_ script: RedisScript, keys: [String], bytes arguments: [[UInt8]]) -> RedisCommand {
        scriptCommand("EVAL", script.source, keys: keys, arguments: arguments)
    }

    /// `<name> <script> <number of keys> <keys> <arguments>`: the key count comes first, so
    /// keys are not where the generic shape puts them.
    private static func scriptCommand<Argument: Collection<UInt8>>(
        _ name: String, _ script: String, keys: [String], arguments: [Argument]
    ) -> RedisCommand {
        var size = ByteBuffer.respLengthLine(3 + keys.count + arguments.count) + ByteBuffer.respBulkString(name.utf8.count)
            + ByteBuffer.respBulkString(script.utf8.count) + ByteBuffer.respBulkString(ByteBuffer.respLengthLine(keys.count) - 3)
        for key in keys { size += ByteBuffer.respBulkString(key.utf8.count) }
        for argument in arguments { size += ByteBuffer.respBulkString(argument.count) }
        var encoded = ByteBufferAllocator().buffer(capacity: size)
        encoded.writeRESPLength(UInt8(ascii: "*"), 3 + keys.count + arguments.count)
        encoded.writeRESPBulkString(name)
        encoded.writeRESPBulkString(script)
        encoded.writeRESPBulkString(String(keys.count))
        for key in keys { encoded.writeRESPBulkString(key) }
        for argument in arguments { encoded.writeRESPBulkString(argument) }
        return RedisCommand(encoded: encoded, keys: keys, isReadOnly: false, name: name)
    }

    private static func scriptCommand(_ name: String, _ script: String, keys: [String], arguments: [String]) -> RedisCommand {
        scriptCommand(name, script, keys: keys, arguments: arguments.map(\.utf8))
    }
}
