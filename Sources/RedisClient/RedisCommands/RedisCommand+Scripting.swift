/// Scripts: `EVALSHA`, and `EVAL` when Redis lost the script (``RedisScript``).
extension RedisCommand {
    public static func evalsha(_ script: RedisScript, keys: [String], arguments: [String]) -> RedisCommand {
        RedisCommand(bytes: scriptArguments("EVALSHA", script.sha1, keys: keys, arguments: arguments), keys: keys)
    }

    public static func eval(_ script: RedisScript, keys: [String], arguments: [String]) -> RedisCommand {
        RedisCommand(bytes: scriptArguments("EVAL", script.source, keys: keys, arguments: arguments), keys: keys)
    }

    /// `<name> <script> <number of keys> <keys> <arguments>`: the key count comes first, so
    /// keys are not where the generic shape puts them.
    private static func scriptArguments(_ name: String, _ script: String, keys: [String], arguments: [String]) -> [[UInt8]] {
        var encoded: [[UInt8]] = [Array(name.utf8), Array(script.utf8), Array(String(keys.count).utf8)]
        encoded.reserveCapacity(3 + keys.count + arguments.count)
        for key in keys { encoded.append(Array(key.utf8)) }
        for argument in arguments { encoded.append(Array(argument.utf8)) }
        return encoded
    }
}
