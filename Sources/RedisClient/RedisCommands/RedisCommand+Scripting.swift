/// Scripts: `EVALSHA`, and `EVAL` when Redis lost the script (``RedisScript``).
extension RedisCommand {
    public static func evalsha(_ script: RedisScript, keys: [String], arguments: [String]) -> RedisCommand {
        evalsha(script, keys: keys, bytes: arguments.map { Array($0.utf8) })
    }

    public static func evalsha(_ script: RedisScript, keys: [String], bytes arguments: [[UInt8]]) -> RedisCommand {
        RedisCommand(bytes: scriptArguments("EVALSHA", script.sha1, keys: keys, arguments: arguments), keys: keys)
    }

    public static func eval(_ script: RedisScript, keys: [String], arguments: [String]) -> RedisCommand {
        eval(script, keys: keys, bytes: arguments.map { Array($0.utf8) })
    }

    public static func eval(_ script: RedisScript, keys: [String], bytes arguments: [[UInt8]]) -> RedisCommand {
        RedisCommand(bytes: scriptArguments("EVAL", script.source, keys: keys, arguments: arguments), keys: keys)
    }

    /// `<name> <script> <number of keys> <keys> <arguments>`: the key count comes first, so
    /// keys are not where the generic shape puts them.
    private static func scriptArguments(_ name: String, _ script: String, keys: [String], arguments: [[UInt8]]) -> [[UInt8]] {
        var encoded: [[UInt8]] = [Array(name.utf8), Array(script.utf8), Array(String(keys.count).utf8)]
        encoded.reserveCapacity(3 + keys.count + arguments.count)
        for key in keys { encoded.append(Array(key.utf8)) }
        encoded.append(contentsOf: arguments)
        return encoded
    }
}
