import Foundation

/// A primary, one replica and three sentinels on free loopback ports, started and stopped by a
/// test: the smallest Sentinel set-up that can fail over (quorum 2).
///
/// The sentinels declare the primary down after `downAfter` without a response, so a killed
/// primary is replaced within a few seconds.
public final class RedisSentinelGroup: @unchecked Sendable {
    // @unchecked: immutable after init; the processes stop themselves on deinit.
    public static let masterName = "pgmaster"
    public let primary: RedisServer
    public let replica: RedisServer
    public let sentinelPorts: [Int]
    private let sentinels: [ChildProcess]
    private let folder: TemporaryFolder

    public init(downAfter: Duration = .milliseconds(1000)) async throws {
        primary = try await RedisServer()
        replica = try await RedisServer(extraArguments: ["--replicaof", "127.0.0.1", String(primary.port)])
        try await eventually(timeout: .seconds(10), interval: .milliseconds(20)) { [replica] in
            try await replica.cli("INFO", "replication").contains("master_link_status:up")
        }
        folder = try TemporaryFolder("pg-sentinels")
        var processes: [ChildProcess] = []
        let ports = (0..<3).map { _ in LoopbackPort.free() }
        // Each sentinel is told its id, the replica and the other sentinels, which it would
        // otherwise learn from INFO and hello messages over a few seconds.
        let ids = (0..<3).map { String(repeating: String($0 + 1), count: 40) }
        for index in 0..<3 {
            let port = ports[index]
            let file = folder.path("sentinel-\(index).conf")
            let others = (0..<3).filter { $0 != index }
                .map { "sentinel known-sentinel \(Self.masterName) 127.0.0.1 \(ports[$0]) \(ids[$0])" }
            try """
            port \(port)
            bind 127.0.0.1
            sentinel myid \(ids[index])
            sentinel monitor \(Self.masterName) 127.0.0.1 \(primary.port) 2
            sentinel down-after-milliseconds \(Self.masterName) \(downAfter.milliseconds)
            sentinel failover-timeout \(Self.masterName) 10000
            sentinel parallel-syncs \(Self.masterName) 1
            sentinel known-replica \(Self.masterName) 127.0.0.1 \(replica.port)
            \(others.joined(separator: "\n"))

            """.write(toFile: file, atomically: true, encoding: .utf8)
            processes.append(try ChildProcess("/usr/bin/redis-server", [file, "--sentinel"], outputPath: folder.path("sentinel-\(index).log")))
        }
        sentinels = processes
        sentinelPorts = ports
        for port in ports {
            try await eventually(timeout: .seconds(10), interval: .milliseconds(20)) { LoopbackPort.isAccepting(port) }
        }
        // Every sentinel has found the replica (and the others), so a failover can happen.
        for port in ports {
            try await eventually(timeout: .seconds(20), interval: .milliseconds(50)) {
                let replicas = try await ShortCommand.run("/usr/bin/redis-cli", ["-p", String(port), "SENTINEL", "replicas", Self.masterName]).stdout
                let peers = try await ShortCommand.run("/usr/bin/redis-cli", ["-p", String(port), "SENTINEL", "sentinels", Self.masterName]).stdout
                let others = peers.split(whereSeparator: \.isNewline).filter { $0 == "name" }.count
                return replicas.contains(String(self.replica.port)) && others >= 2
            }
        }
    }

    deinit {
        for sentinel in sentinels { sentinel.kill9() }
    }

    /// `redis.sentinel` for a gateway configuration.
    public var yaml: String {
        "sentinel: {master_name: \(Self.masterName), nodes: [\(sentinelPorts.map { "\"127.0.0.1:\($0)\"" }.joined(separator: ", "))]}"
    }

    /// The port of the primary the sentinels name now.
    public func primaryPort() async throws -> Int? {
        for port in sentinelPorts {
            let reply = try await ShortCommand.run("/usr/bin/redis-cli", ["-p", String(port), "SENTINEL", "get-master-addr-by-name", Self.masterName])
            let lines = reply.stdout.split(whereSeparator: \.isNewline)
            if lines.count == 2, let value = Int(lines[1]) { return value }
        }
        return nil
    }
}

extension Duration {
    var milliseconds: Int {
        let (seconds, attoseconds) = components
        return Int(seconds) * 1000 + Int(attoseconds / 1_000_000_000_000_000)
    }
}
