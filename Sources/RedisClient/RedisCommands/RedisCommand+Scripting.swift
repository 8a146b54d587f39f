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
        RedisCommand(encoded: scriptEncoding(name, script, keys: keys, arguments: arguments).encoded, keys: keys, isReadOnly: false, name: name)
    }

    private static func scriptCommand(_ name: String, _ script: String, keys: [String], arguments: [String]) -> RedisCommand {
        scriptCommand(name, script, keys: keys, arguments: arguments.map(\.utf8))
    }

    /// A script command's bytes, with where its key count and its last argument start
    /// (``RedisScriptCall`` copies what follows them).
    static func scriptEncoding<Argument: Collection<UInt8>>(
        _ name: String, _ script: String, keys: [String], arguments: [Argument]
    ) -> (encoded: ByteBuffer, keyCountOffset: Int, lastArgumentOffset: Int) {
        var keyCountOffset = 0
        var lastArgumentOffset = 0
        let encoded = RESPWriter.encode { resp in
            resp.array(3 + keys.count + arguments.count)
            resp.bulk(name)
            resp.bulk(script)
            keyCountOffset = resp.index
            resp.bulk(decimal: keys.count)
            for key in keys { resp.bulk(key) }
            lastArgumentOffset = resp.index
            for argument in arguments {
                lastArgumentOffset = resp.index
                resp.bulk(argument)
            }
        }
        return (encoded, keyCountOffset, lastArgumentOffset)
    }
}
