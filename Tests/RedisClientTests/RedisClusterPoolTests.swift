import Foundation
import RedisClient
import Synchronization
import Testing
import TestSupport

/// The pool on a real three-primary cluster: commands reach their slot's primary, pipelines
/// span nodes, and `ASK` and `MOVED` are followed while a slot moves.
@Suite(.serialized, .timingSensitive) struct RedisClusterPoolTests {
    /// Redirections the pool followed, by kind.
    final class Redirections: Sendable {
        private let counts = Mutex<[RedisPoolObserver.Redirection: Int]>([:])
        func record(_ kind: RedisPoolObserver.Redirection) { counts.withLock { $0[kind, default: 0] += 1 } }
        subscript(_ kind: RedisPoolObserver.Redirection) -> Int { counts.withLock { $0[kind, default: 0] } }
    }

    /// Increments each worker saw acknowledged, and when to stop.
    final class Tally: Sendable {
        private let state = Mutex((counts: [String: Int](), stopped: false))
        func add(_ key: String) { state.withLock { $0.counts[key, default: 0] += 1 } }
        subscript(_ key: String) -> Int { state.withLock { $0.counts[key, default: 0] } }
        var isStopped: Bool { state.withLock { $0.stopped } }
        func stop() { state.withLock { $0.stopped = true } }
    }

    private func pool(_ cluster: RedisClusterGroup, redirections: Redirections, waitReplicas: Int = 0) throws -> RedisConnectionPool {
        let configuration = RedisConfiguration(
            url: try RedisURL("redis://127.0.0.1:1/0"),
            cluster: RedisCluster(seeds: [RedisNodeAddress(host: "127.0.0.1", port: cluster.nodes[0].port)]),
            poolSize: 2, timeout: .seconds(2), waitReplicas: waitReplicas
        )
        return RedisConnectionPool(configuration: configuration, observer: RedisPoolObserver(
            started: {}, finished: { _, _, _ in }, scriptFinished: { _, _, _ in }, dialed: { _ in },
            redirected: { redirections.record($0) }
        ))
    }

    @Test func commandsPipelinesAndScriptsReachEveryPrimary() async throws {
        let cluster = try await RedisClusterGroup()
        let redirections = Redirections()
        let redis = try pool(cluster, redirections: redirections)
        defer { redis.shutdown() }

        let keys = (0..<60).map { "pg:test:{\($0)}" }
        for key in keys { _ = try await redis.send(.set(key, "v-\(key)")) }
        // Each key is on the primary its slot says, and only there.
        for key in keys.prefix(10) {
            let port = try #require(try await cluster.primaryPort(forSlot: try await cluster.slot(of: key)))
            #expect(try await cluster.node(port)!.cli("GET", key) == "v-\(key)")
        }
        #expect(Set(try await redis.configuration.cluster!.primaries.map(\.port)) == (try await cluster.primaryPorts()))
        // A pipeline over every node comes back in order.
        let replies = try await redis.pipeline(keys.map { .get($0) })
        #expect(replies.map(\.string) == keys.map { "v-\($0)" })
        // A script is loaded on each node that lacks it.
        let script = RedisScript(name: "echo-key", source: "return redis.call('GET', KEYS[1])")
        for key in keys.prefix(12) {
            #expect(try await redis.run(script, keys: [key], arguments: []).string == "v-\(key)")
        }
        // A transaction across slots is refused before anything is sent; in one slot it runs.
        await #expect(throws: RedisError.self) {
            try await redis.transaction([.set("pg:test:{1}", "x"), .set("pg:test:{2}", "x")])
        }
        #expect(try await redis.send(.get("pg:test:{1}")).string == "v-pg:test:{1}")
        let results = try await redis.transaction([.set("pg:test:{1}:a", "x"), .get("pg:test:{1}")])
        #expect(results.last?.string == "v-pg:test:{1}")
        // Every primary answers PING; keyless commands reach each of them.
        try await redis.ping()
        #expect(try await redis.sendToEveryPrimary(.info("memory")).count == 3)
        #expect(redirections[.moved] == 0 && redirections[.ask] == 0)

        // `wait_replicas: 1` waits on the node that ran the script, for its own replica.
        let durable = try pool(cluster, redirections: redirections, waitReplicas: 1)
        defer { durable.shutdown() }
        let write = RedisScript(name: "set-key", source: "return redis.call('SET', KEYS[1], ARGV[1])")
        for key in keys.prefix(12) {
            #expect(try await durable.run(write, keys: [key], arguments: ["durable"]).string == "OK")
        }
        #expect(try await durable.send(.get(keys[11])).string == "durable")
    }

    @Test func aSlotMigratedDuringTrafficIsFollowedWithAskThenMoved() async throws {
        let cluster = try await RedisClusterGroup()
        let redirections = Redirections()
        let redis = try pool(cluster, redirections: redirections)
        defer { redis.shutdown() }
        // Many keys in one slot, so the migration is half done for a while.
        let keys = (0..<30).map { "pg:ctr:{hot}:\($0)" }
        for key in keys { _ = try await redis.send(.set(key, "0")) }
        let slot = try await cluster.slot(of: keys[0])
        let expected = Tally()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for worker in 0..<8 {
                group.addTask {
                    var round = 0
                    while !expected.isStopped {
                        let key = keys[(worker + round * 8) % keys.count]
                        round += 1
                        let value = try await redis.send(RedisCommand("INCR", keys: [key])).int
                        #expect(value != nil)
                        expected.add(key)
                    }
                }
            }
            group.addTask {
                try await cluster.migrate(slot: slot) { try await Task.sleep(for: .milliseconds(30)) }
                try await Task.sleep(for: .milliseconds(200))
                expected.stop()
            }
            try await group.waitForAll()
        }
        // No increment was lost or doubled while the slot moved.
        for key in keys {
            #expect(try await redis.send(.get(key)).int == Int64(expected[key]), "\(key)")
        }
        print("slot \(slot) migrated under traffic: \(redirections[.ask]) ASK, \(redirections[.moved]) MOVED followed")
        #expect(redirections[.ask] > 0, "the ASK path was exercised")
        #expect(redirections[.moved] > 0, "the map was corrected after the move")
    }
}

extension RedisClusterPoolTests {
    /// A primary killed outright: `ping` (what `/readyz` asks) fails while its slots have no
    /// primary, the promoted replica is found without a restart, and no acknowledged write
    /// that reached the replica is lost.
    @Test func aKilledPrimaryIsReplacedByItsReplica() async throws {
        let cluster = try await RedisClusterGroup()
        let redirections = Redirections()
        let redis = try pool(cluster, redirections: redirections)
        defer { redis.shutdown() }
        let keys = (0..<30).map { "pg:kill:{\($0)}" }
        let slot = try await cluster.slot(of: keys[0])
        // Before the kill every key must be readable and the victim's replica must have its
        // writes (replication is asynchronous). On a loaded machine a primary can stall
        // past the node timeout and be failed over meanwhile, losing the writes it took (Redis
        // Cluster's documented write loss, not the client's), so the writes are made again until
        // both hold.
        var victimPort = 0
        var rounds = 0
        try await eventually(timeout: .seconds(30), interval: .milliseconds(250)) {
            rounds += 1
            for key in keys { _ = try await redis.send(.set(key, "v")) }
            for key in keys {
                guard try await redis.send(.get(key)).string == "v" else { return false }
            }
            guard let port = try await cluster.primaryPort(forSlot: slot), let node = cluster.node(port) else { return false }
            victimPort = port
            // A replica acknowledges what it has once a second.
            return (try? await eventually(timeout: .seconds(3), interval: .milliseconds(50)) { try await Self.replicaHasCaughtUp(node) }) != nil
        }
        if rounds > 1 { print("cluster primary kill: the writes were made \(rounds) times before both held") }
        let victim = try #require(cluster.node(victimPort))
        victim.kill()
        await #expect(throws: RedisError.self) { try await redis.ping() }
        let clock = ContinuousClock()
        let killed = clock.now
        try await eventually(timeout: .seconds(30), interval: .milliseconds(100)) { (try? await redis.ping()) != nil }
        print("cluster primary killed: ping answers again after \(clock.now - killed)")
        for key in keys { #expect(try await redis.send(.get(key)).string == "v", "\(key)") }
        #expect(redis.configuration.cluster?.failoversSeen == 1)
        #expect(!(redis.configuration.cluster?.primaries.contains { $0.port == victimPort } ?? true))
    }

    /// Whether a replica of `primary` has acknowledged everything it holds. `WAIT` cannot say:
    /// it counts only the writes of its own connection, and `cli` opens a new one.
    private static func replicaHasCaughtUp(_ primary: RedisServer) async throws -> Bool {
        let lines = try await primary.cli("INFO", "replication").split(whereSeparator: \.isNewline)
        func number(_ text: Substring) -> Int? { Int(text.trimmingCharacters(in: .whitespacesAndNewlines)) }
        guard let held = lines.first(where: { $0.hasPrefix("master_repl_offset:") }).flatMap({ number($0.dropFirst("master_repl_offset:".count)) }) else {
            return false
        }
        return lines.contains { line in
            guard line.hasPrefix("slave"), let offset = line.split(separator: ",").first(where: { $0.hasPrefix("offset=") }) else { return false }
            return (number(offset.dropFirst("offset=".count)) ?? -1) >= held
        }
    }
}

/// The invalidation subscriber on a cluster: it subscribes on one node (a `PUBLISH` on any
/// node reaches every node), and when that node dies it moves to another and resets again.
@Suite(.serialized, .realProcesses) struct RedisClusterSubscriberTests {
    @Test func theSubscriptionMovesToAnotherNodeWhenItsNodeDies() async throws {
        let cluster = try await RedisClusterGroup()
        let events = SubscriberEvents()
        let configuration = RedisConfiguration(
            url: try RedisURL("redis://127.0.0.1:1/0"),
            cluster: RedisCluster(seeds: cluster.nodes.map { RedisNodeAddress(host: "127.0.0.1", port: $0.port) }),
            poolSize: 1, timeout: .seconds(2), reconnectBackoff: .milliseconds(50)
        )
        let subscriber = RedisSubscriber(
            configuration: configuration, channels: ["pg:invalidate"],
            onReset: { events.reset() }, onMessage: { _, payload in events.message(payload) }
        )
        let task = Task { try await subscriber.run() }
        defer { task.cancel() }
        try await eventually(timeout: .seconds(5)) { events.resets >= 1 }
        // Published on every node in turn: each message reaches the one subscription.
        for (index, node) in cluster.nodes.enumerated() {
            try await node.cli("PUBLISH", "pg:invalidate", "from-\(index)")
        }
        try await eventually(timeout: .seconds(2)) { events.messages.count == cluster.nodes.count }

        var subscribedNode: RedisServer?
        for node in cluster.nodes where try await node.cli("PUBSUB", "NUMSUB", "pg:invalidate").hasSuffix("1") {
            subscribedNode = node
        }
        let dying = try #require(subscribedNode)
        let resetsBefore = events.resets
        dying.kill()
        // It resets (messages may have been missed) and subscribes elsewhere.
        try await eventually(timeout: .seconds(5)) { events.resets > resetsBefore + 1 }
        let survivor = try #require(cluster.nodes.first { $0.port != dying.port })
        try await eventually(timeout: .seconds(5)) {
            try await survivor.cli("PUBLISH", "pg:invalidate", "after-move")
            return events.messages.contains("after-move")
        }
    }
}
