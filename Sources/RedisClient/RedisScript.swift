import Crypto

/// A Lua script, identified by the SHA-1 that `EVALSHA` names it by.
public struct RedisScript: Sendable, Hashable {
    /// A short name for logs.
    public let name: String
    public let source: String
    public let sha1: String

    public init(name: String, source: String) {
        self.name = name
        self.source = source
        self.sha1 = Insecure.SHA1.hash(data: Array(source.utf8)).map { byte in
            let hex = String(byte, radix: 16)
            return byte < 16 ? "0" + hex : hex
        }.joined()
    }

    func evalSHA(keys: [String], arguments: [String]) -> RedisCommand {
        RedisCommand("EVALSHA", [sha1, String(keys.count)] + keys + arguments)
    }

    func eval(keys: [String], arguments: [String]) -> RedisCommand {
        RedisCommand("EVAL", [source, String(keys.count)] + keys + arguments)
    }
}
