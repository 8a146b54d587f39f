import DriverSessions
import DriverTokens
import Foundation
import Logging
import RedisClient
import TestSupport

/// A private redis-server with a pool, and the stores under test built on it.
struct Fixture {
    static let phoneKey: [UInt8] = Array("0123456789abcdef0123456789abcdef-test-key".utf8)

    let server: RedisServer
    let pool: RedisConnectionPool
    let hasher: PhoneHasher

    /// - Parameter cluster: run Redis in cluster mode, one node holding every slot: then
    ///   every command and script whose keys span two slots fails with `CROSSSLOT`, as it
    ///   would on a real cluster.
    init(poolSize: Int = 4, cluster: Bool = false) async throws {
        // The cluster bus needs a free port of its own (by default port + 10000, which may
        // be taken or past 65535).
        server = try await RedisServer(
            extraArguments: cluster ? ["--cluster-enabled", "yes", "--cluster-port", String(LoopbackPort.free())] : [])
        if cluster {
            let server = server
            try await server.cli("CLUSTER", "ADDSLOTSRANGE", "0", "16383")
            try await eventually(timeout: .seconds(10), interval: .milliseconds(50)) {
                try await server.cli("CLUSTER", "INFO").contains("cluster_state:ok")
            }
        }
        pool = RedisConnectionPool(configuration: RedisConfiguration(url: try RedisURL(server.url), poolSize: poolSize, timeout: .seconds(5)))
        hasher = try PhoneHasher(key: Self.phoneKey)
    }

    func otpStore(_ policy: OTPPolicy = OTPPolicy()) -> OTPStore {
        OTPStore(redis: pool, hasher: hasher, policy: policy)
    }

    func sessionStore(
        refreshTTL: Duration = .seconds(30 * 86_400), accessTTL: Duration = .seconds(86_400), reuseInterval: Duration = .seconds(10)
    ) -> SessionStore {
        SessionStore(
            redis: pool, hasher: hasher, successorKey: RefreshSuccessorKey(derivingFrom: Self.phoneKey),
            refreshTTL: refreshTTL, accessTTL: accessTTL, reuseInterval: reuseInterval
        )
    }

    func revocations(accessTTL: Duration = .seconds(86_400)) -> SessionRevocations {
        SessionRevocations(redis: pool, accessTTL: accessTTL, logger: Logger(label: "test.revocations"))
    }

    /// Closes the pool and stops the server.
    func close() async {
        pool.shutdown()
        await server.stop()
    }

    /// Every key name and value in Redis, for leak scans.
    func everything() async throws -> String {
        var dump = ""
        for key in try await server.cli("--scan").split(separator: "\n") {
            dump += key + "\n"
            switch try await server.cli("TYPE", String(key)) {
            case "hash": dump += try await server.cli("HGETALL", String(key))
            case "string": dump += try await server.cli("GET", String(key))
            case "set": dump += try await server.cli("SMEMBERS", String(key))
            case "zset": dump += try await server.cli("ZRANGE", String(key), "0", "-1", "WITHSCORES")
            case "list": dump += try await server.cli("LRANGE", String(key), "0", "-1")
            case "stream": dump += try await server.cli("XRANGE", String(key), "-", "+")
            default: dump += "<unknown type>"
            }
            dump += "\n"
        }
        return dump
    }

    /// Redis's own clock, in milliseconds (the scripts' time source).
    func redisNowMilliseconds() async throws -> Int64 {
        let parts = try await server.cli("TIME").split(separator: "\n")
        guard parts.count == 2, let seconds = Int64(parts[0]), let micros = Int64(parts[1]) else {
            throw UnexpectedReply(text: parts.joined(separator: " "))
        }
        return seconds * 1000 + micros / 1000
    }
}

struct UnexpectedReply: Error, CustomStringConvertible {
    let text: String
    var description: String { "unexpected reply: \(text)" }
}

func phone(_ text: String) throws -> PhoneNumber {
    guard let phone = PhoneNumber(text) else { throw UnexpectedReply(text: "not a phone: \(text.count) chars") }
    return phone
}
