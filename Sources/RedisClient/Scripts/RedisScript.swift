import Crypto

/// A Lua script, identified by the SHA-1 that `EVALSHA` names it by.
public struct RedisScript: Sendable, Hashable {
    /// A short name for logs.
    public let name: String
    public let source: String
    public let sha1: String
    /// Whether losing this script's writes in a failover could grant access again (a
    /// revocation, a logout, a spent refresh token): with `redis.wait_replicas` such a script
    /// is answered only once replicas confirm it. Scripts whose loss costs nothing (a rate
    /// limit's bucket) say false and never wait.
    public let waitsForReplicas: Bool

    public init(name: String, source: String, waitsForReplicas: Bool = true) {
        self.name = name
        self.source = source
        self.waitsForReplicas = waitsForReplicas
        self.sha1 = Insecure.SHA1.hash(data: Array(source.utf8)).map { byte in
            let hex = String(byte, radix: 16)
            return byte < 16 ? "0" + hex : hex
        }.joined()
    }

}
