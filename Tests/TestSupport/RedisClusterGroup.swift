import Foundation

/// A Redis Cluster of three primaries and three replicas on free loopback ports, made with
/// `redis-cli --cluster create`, started and stopped by a test.
///
/// `cluster-node-timeout` is short (`nodeTimeout`), so a killed primary is replaced within a
/// few seconds. Helpers migrate a slot and fail a primary over the way an operator would.
public final class RedisClusterGroup: @unchecked Sendable {
    // @unchecked: immutable after init; the servers stop themselves on deinit.
    public let nodes: [RedisServer]

    public init(nodeTimeout: Duration = .milliseconds(1000)) async throws {
        await ClusterTurns.shared.take()
        do {
            nodes = try await Self.start(nodeTimeout: nodeTimeout)
        } catch {
            await ClusterTurns.shared.give()
            throw error
        }
        // From here a failure runs deinit, which gives the turn back.
        try await waitUntilHealthy()
    }

    deinit {
        Task { await ClusterTurns.shared.give() }
    }

    private static func start(nodeTimeout: Duration) async throws -> [RedisServer] {
        var nodes: [RedisServer] = []
        for _ in 0..<6 {
            nodes.append(try await RedisServer(extraArguments: [
                "--cluster-enabled", "yes", "--cluster-node-timeout", String(nodeTimeout.milliseconds),
                "--cluster-port", String(LoopbackPort.free()), "--cluster-require-full-coverage", "yes",
            ]))
        }
        let create = try await ShortCommand.run(
            "/usr/bin/redis-cli",
            ["--cluster", "create"] + nodes.map { "127.0.0.1:\($0.port)" } + ["--cluster-replicas", "1", "--cluster-yes"]
        )
        guard create.stdout.contains("All 16384 slots covered") else { throw ClusterNotCreated(output: create.stdout) }
        return nodes
    }

    /// `redis.cluster` for a gateway configuration, naming one node only: the rest is found.
    public var yaml: String {
        "cluster: {nodes: [\"127.0.0.1:\(nodes[0].port)\"]}"
    }

    /// Waits until every node says `cluster_state:ok`, agrees on three primaries, and every
    /// replica is in sync with its primary.
    public func waitUntilHealthy(timeout: Duration = .seconds(30)) async throws {
        try await eventually(timeout: timeout, interval: .milliseconds(250)) {
            for node in self.nodes where try await self.isRunning(node) {
                guard try await node.cli("CLUSTER", "INFO").contains("cluster_state:ok") else { return false }
            }
            let primaries = try await self.primaryPorts()
            guard primaries.count == 3 else { return false }
            for node in self.nodes where try await self.isRunning(node) && !primaries.contains(node.port) {
                guard try await node.cli("INFO", "replication").contains("master_link_status:up") else { return false }
            }
            return true
        }
    }

    /// The ports of the primaries serving slots, as the first node that responses sees them.
    public func primaryPorts() async throws -> Set<Int> {
        Set(try await slotRanges().map(\.port))
    }

    /// The port of the primary serving `slot`.
    public func primaryPort(forSlot slot: Int) async throws -> Int? {
        try await slotRanges().first { $0.range.contains(slot) }?.port
    }

    /// The slot of `key`, as Redis computes it.
    public func slot(of key: String) async throws -> Int {
        guard let slot = Int(try await anyNode().cli("CLUSTER", "KEYSLOT", key)) else { throw ClusterNotCreated(output: "no KEYSLOT") }
        return slot
    }

    /// The node listening on `port`.
    public func node(_ port: Int) -> RedisServer? {
        nodes.first { $0.port == port }
    }

    /// Moves `slot` to another primary the way `redis-cli --cluster reshard` does, one key
    /// at a time: `IMPORTING`/`MIGRATING`, then `MIGRATE` per key (calling `between` after
    /// each, so traffic meets a half-moved slot), then `SETSLOT NODE` on both. Returns the
    /// port it moved to.
    @discardableResult
    public func migrate(slot: Int, pauseBetweenKeys between: @Sendable () async throws -> Void = {}) async throws -> Int {
        guard let sourcePort = try await primaryPort(forSlot: slot), let source = node(sourcePort) else {
            throw ClusterNotCreated(output: "no primary for slot \(slot)")
        }
        let targetPort = try await primaryPorts().sorted().first { $0 != sourcePort }!
        let target = node(targetPort)!
        let sourceID = try await source.cli("CLUSTER", "MYID")
        let targetID = try await target.cli("CLUSTER", "MYID")
        try await target.cli("CLUSTER", "SETSLOT", String(slot), "IMPORTING", sourceID)
        try await source.cli("CLUSTER", "SETSLOT", String(slot), "MIGRATING", targetID)
        while true {
            let keys = try await source.cli("CLUSTER", "GETKEYSINSLOT", String(slot), "1")
            guard !keys.isEmpty else { break }
            try await between()
            let moved = try await source.cli("MIGRATE", "127.0.0.1", String(targetPort), "", "0", "5000", "KEYS", keys)
            guard moved == "OK" else { throw ClusterNotCreated(output: "MIGRATE: \(moved)") }
        }
        try await between()
        for node in [target, source] {
            try await node.cli("CLUSTER", "SETSLOT", String(slot), "NODE", targetID)
        }
        return targetPort
    }

    /// Promotes the replica of the primary on `primaryPort` with `CLUSTER FAILOVER` (the
    /// replica catches up first, so nothing acknowledged is lost) and waits until the cluster
    /// agrees. Returns the new primary's port.
    @discardableResult
    public func failOver(primaryPort: Int) async throws -> Int {
        let primaryID = try await node(primaryPort)!.cli("CLUSTER", "MYID")
        var replicaPort: Int?
        for node in nodes where node.port != primaryPort {
            if try await node.cli("INFO", "replication").contains("master_port:\(primaryPort)") { replicaPort = node.port }
        }
        guard let replicaPort, let replica = node(replicaPort) else { throw ClusterNotCreated(output: "no replica of \(primaryID)") }
        let answer = try await replica.cli("CLUSTER", "FAILOVER")
        guard answer == "OK" else { throw ClusterNotCreated(output: "CLUSTER FAILOVER: \(answer)") }
        try await eventually(timeout: .seconds(20), interval: .milliseconds(50)) {
            let primaries = try await self.primaryPorts()
            return primaries.contains(replicaPort) && !primaries.contains(primaryPort)
        }
        try await waitUntilHealthy()
        return replicaPort
    }

    private func isRunning(_ node: RedisServer) async throws -> Bool {
        LoopbackPort.isAccepting(node.port)
    }

    private func anyNode() async throws -> RedisServer {
        for node in nodes where try await isRunning(node) { return node }
        throw ClusterNotCreated(output: "no node is running")
    }

    /// The slot ranges of each primary not marked failed, from `CLUSTER NODES` (one line a
    /// node: `id ip:port@bus flags primary ping pong epoch link slot...`).
    private func slotRanges() async throws -> [(range: ClosedRange<Int>, port: Int)] {
        var ranges: [(ClosedRange<Int>, Int)] = []
        for line in try await anyNode().cli("CLUSTER", "NODES").split(whereSeparator: \.isNewline) {
            let fields = line.split(separator: " ")
            guard fields.count >= 8, fields[2].contains("master"), !fields[2].contains("fail"),
                  let port = fields[1].split(separator: "@").first?.split(separator: ":").last.flatMap({ Int($0) })
            else { continue }
            for slots in fields.dropFirst(8) where !slots.hasPrefix("[") {
                let bounds = slots.split(separator: "-").compactMap { Int($0) }
                if let first = bounds.first { ranges.append((first...(bounds.last ?? first), port)) }
            }
        }
        return ranges
    }
}

/// One cluster at a time in a test process: each is six servers and their gossip, and several
/// at once starve the timing-sensitive tests that run beside them on a small machine. A
/// cluster takes its turn when made and gives it back when released.
private actor ClusterTurns {
    static let shared = ClusterTurns()
    private var taken = false
    private var waiting: [CheckedContinuation<Void, Never>] = []

    func take() async {
        guard taken else {
            taken = true
            return
        }
        await withCheckedContinuation { waiting.append($0) }
    }

    func give() {
        if waiting.isEmpty {
            taken = false
        } else {
            waiting.removeFirst().resume()
        }
    }
}

public struct ClusterNotCreated: Error, CustomStringConvertible {
    public let output: String
    public var description: String { "redis cluster: \(output)" }
}
