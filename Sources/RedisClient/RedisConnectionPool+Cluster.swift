import NIOCore

/// Redis Cluster routing: each command to the primary of its key's slot, following `MOVED`
/// (the map was out of date: correct it, read it again, retry), `ASK` (a slot in migration:
/// retry once on the named node after `ASKING`, map unchanged) and `TRYAGAIN`/`CLUSTERDOWN`
/// (retry shortly), all within the call's one deadline.
extension RedisConnectionPool {
    /// More redirections than this for one call means the cluster is reconfiguring faster
    /// than it can be followed; the last reply is returned as it is.
    static let maximumRedirections = 5
    /// The pause before retrying after `TRYAGAIN` or `CLUSTERDOWN`.
    static let clusterRetryPause = Duration.milliseconds(20)

    private var cluster: RedisCluster {
        guard let cluster = configuration.cluster else { preconditionFailure("cluster routing without redis.cluster") }
        return cluster
    }

    /// `commands` in one write to the node serving `slot` (any primary when nil), sent again
    /// to wherever a redirection in any reply points. Safe to resend: a redirected command did
    /// not run, and the batches sent this way hold one script or read (and at most a `WAIT`)
    /// or one transaction, which `EXEC` discards when a command in it was redirected.
    func exchange(_ commands: [RedisCommand], slot: Int?, deadline: NIODeadline) async throws -> [RedisValue] {
        var askingAt: RedisNodeAddress?
        var redirections = 0
        while true {
            let node: RedisNodePool
            if let askingAt {
                node = try nodePool(at: askingAt)
            } else {
                node = try await nodePool(forSlot: slot)
            }
            let replies: [RedisValue]
            do {
                let connection = try await node.connection(deadline: deadline)
                replies = try await connection.pipeline(askingAt == nil ? commands : [.asking] + commands, deadline: deadline)
            } catch let error as RedisError where !error.isServer {
                // A node that cannot be reached may have failed over: read the map again.
                refreshSlotMap()
                throw error
            }
            let answers = askingAt == nil ? replies : Array(replies.dropFirst())
            askingAt = nil
            guard redirections < Self.maximumRedirections,
                  let redirection = answers.lazy.compactMap({ RedisRedirection($0, answeredBy: node.address) }).first
            else { return answers }
            redirections += 1
            switch redirection {
            case .moved(let movedSlot, let target):
                observer?.redirected(.moved)
                cluster.moved(movedSlot, to: target)
                refreshSlotMap()
            case .ask(_, let target):
                observer?.redirected(.ask)
                askingAt = target
            case .tryAgain:
                guard NIODeadline.now() + TimeAmount(Self.clusterRetryPause) < deadline else { return answers }
                refreshSlotMap()
                try await Task.sleep(for: Self.clusterRetryPause)
            }
        }
    }

    /// A pipeline over several slots: one pipeline per node at once, the replies put back in
    /// the commands' order; a redirected reply is replaced by its command sent on its own.
    /// Keyless commands go with the keyed command before them.
    func clusterPipeline(_ commands: [RedisCommand], deadline: NIODeadline) async throws -> [RedisValue] {
        var slots: [Int?] = []
        var previous: Int?
        for command in commands {
            previous = RedisHashSlot.of(command) ?? previous
            slots.append(previous)
        }
        if Set(slots.compactMap { $0 }).count <= 1 {
            return try await exchange(commands, slot: slots.compactMap { $0 }.first, deadline: deadline)
        }
        var byNode: [RedisNodeAddress: [Int]] = [:]
        for (index, slot) in slots.enumerated() {
            byNode[try await clusterPrimary(forSlot: slot), default: []].append(index)
        }
        var replies = [RedisValue](repeating: .null, count: commands.count)
        try await withThrowingTaskGroup(of: ([Int], [RedisValue]).self) { group in
            for (node, indices) in byNode {
                let pool = try nodePool(at: node)
                group.addTask {
                    do {
                        let connection = try await pool.connection(deadline: deadline)
                        return (indices, try await connection.pipeline(indices.map { commands[$0] }, deadline: deadline))
                    } catch let error as RedisError where !error.isServer {
                        self.refreshSlotMap()
                        throw error
                    }
                }
            }
            for try await (indices, answers) in group {
                for (index, answer) in zip(indices, answers) { replies[index] = answer }
            }
        }
        for index in replies.indices where RedisRedirection(replies[index], answeredBy: nil) != nil {
            replies[index] = try await exchange([commands[index]], slot: slots[index], deadline: deadline)[0]
        }
        return replies
    }

    /// The primary serving `slot` per the map (read first if there is none), or for a keyless
    /// command any primary; a slot no primary serves is a connection error (`CLUSTERDOWN`).
    func clusterPrimary(forSlot slot: Int?) async throws -> RedisNodeAddress {
        let map = try await cluster.slotMap(read: slotMapReader())
        if let slot {
            guard let node = map.primary(forSlot: slot) else {
                refreshSlotMap()
                throw RedisError.connection("no reachable primary serves cluster slot \(slot)")
            }
            return node
        }
        guard let node = map.primaries.randomElement() else { throw RedisError.connection("the cluster has no primary") }
        return node
    }

    /// Reads the slot map again soon (single-flight, rate-limited by ``RedisCluster``); nothing
    /// when not on a cluster. Public for whoever learns that Redis is back (the gateway's
    /// subscriber), so the map is read even with no traffic to read it.
    public func refreshSlotMap() {
        guard configuration.cluster != nil else { return }
        cluster.refresh(read: slotMapReader())
    }

    /// Asks the known primaries, then the seeds, for the map, `CLUSTER SHARDS` first and
    /// `CLUSTER SLOTS` where that is unknown (Redis before 7). A node that sees slots without
    /// a primary (it has not yet noticed a failover) is passed over while another may know better.
    private func slotMapReader() -> @Sendable () async throws -> RedisClusterSlotMap {
        { [weak self] in
            guard let self else { throw RedisError.poolClosed }
            var failures: [String] = []
            var incomplete: RedisClusterSlotMap?
            for node in cluster.candidates() {
                let deadline = NIODeadline.now() + TimeAmount(configuration.timeout)
                do {
                    let connection = try await nodePool(at: node).connection(deadline: deadline)
                    let map: RedisClusterSlotMap
                    do {
                        let shards = try await connection.send(.clusterShards, deadline: deadline)
                        map = try RedisClusterSlotMap(shards: shards, asked: node, usesTLS: configuration.url.usesTLS)
                    } catch let error as RedisError where error.isServer && !error.isAuthentication && !error.isPermissionDenied {
                        let slots = try await connection.send(.clusterSlots, deadline: deadline)
                        map = try RedisClusterSlotMap(slots: slots, asked: node)
                    }
                    if map.uncoveredSlots == 0 { return map }
                    incomplete = incomplete ?? map
                    failures.append("\(node): \(map.uncoveredSlots) slots without a primary")
                } catch let error as RedisError where error.isTLS || error.isAuthentication {
                    // Every node has the same certificate authority and credentials: no other
                    // node will do better, and start-up must see why.
                    throw error
                } catch {
                    failures.append("\(node): \(error)")
                }
            }
            if let incomplete { return incomplete }
            throw RedisError.connection("no cluster node answered CLUSTER SHARDS (\(failures.joined(separator: "; ")))")
        }
    }

    func pingEveryPrimary() async throws {
        for (_, reply) in try await clusterSendToEveryPrimary(.ping()) { _ = try reply.throwingServerError() }
        let uncovered = cluster.uncoveredSlots
        guard uncovered == 0 else {
            refreshSlotMap()
            throw RedisError.connection("\(uncovered) cluster slots have no reachable primary")
        }
    }

    func clusterSendToEveryPrimary(_ command: RedisCommand) async throws -> [(node: String, reply: RedisValue)] {
        _ = try await cluster.slotMap(read: slotMapReader())
        let deadline = NIODeadline.now() + TimeAmount(configuration.timeout)
        return try await withThrowingTaskGroup(of: (node: String, reply: RedisValue).self) { group in
            for node in cluster.primaries {
                let pool = try nodePool(at: node)
                group.addTask {
                    do {
                        return ("\(node)", try await pool.connection(deadline: deadline).pipeline([command], deadline: deadline)[0])
                    } catch let error as RedisError where !error.isServer {
                        self.refreshSlotMap()
                        throw RedisError.connection("cluster primary \(node): \(error.detail)")
                    }
                }
            }
            var replies: [(node: String, reply: RedisValue)] = []
            for try await reply in group { replies.append(reply) }
            return replies
        }
    }
}
