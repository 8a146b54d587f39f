import Logging
import NIOCore
import Synchronization

/// Redis Cluster: one ``RedisNodePool`` per node, made on first use, each call to the primary
/// of its keys' slot per the map ``RedisCluster`` keeps, and what a node's refusal means:
/// `MOVED` (the map was out of date: correct it, read it again, retry), `ASK` (a slot in
/// migration: retry once on the named node after `ASKING`, map unchanged) and
/// `TRYAGAIN`/`CLUSTERDOWN` (retry shortly).
final class RedisClusterPool: RedisTopologyPool {
    /// The pause before retrying after `TRYAGAIN` or `CLUSTERDOWN`.
    static let retryPause = TimeAmount.milliseconds(20)

    private let cluster: RedisCluster
    private let configuration: RedisConfiguration
    private let eventLoopGroup: any EventLoopGroup
    private let logger: Logger
    private let observer: RedisPoolObserver?
    private let nodePools = Mutex<[RedisNodeAddress: RedisNodePool]>([:])
    private let isShutDown = Atomic<Bool>(false)

    init(
        configuration: RedisConfiguration, cluster: RedisCluster, eventLoopGroup: any EventLoopGroup, logger: Logger,
        observer: RedisPoolObserver?
    ) {
        self.configuration = configuration
        self.cluster = cluster
        self.eventLoopGroup = eventLoopGroup
        self.logger = logger
        self.observer = observer
    }

    var mode: String { "cluster" }
    var primaryNames: [String] { cluster.primaries.map(\.description) }

    // MARK: Routing

    func slot(of keys: [String], in what: @autoclosure () -> String) throws(RedisError) -> Int? {
        try Self.commonSlot(of: keys, in: what())
    }

    func slot(of call: RedisScriptCall) throws(RedisError) -> Int? {
        try call.slot.get()
    }

    /// The one slot all `keys` share (nil when there are none); throws when they differ.
    /// Each key is hashed in turn, with no array of slots made for the usual single key.
    static func commonSlot(of keys: [String], in what: @autoclosure () -> String) throws(RedisError) -> Int? {
        guard let first = keys.first.map(RedisHashSlot.of) else { return nil }
        for key in keys.dropFirst() where RedisHashSlot.of(key) != first {
            let slots = Set(keys.map(RedisHashSlot.of))
            throw RedisError.crossSlot("\(what()) names keys of \(slots.count) cluster slots; it must stay in one")
        }
        return first
    }

    func knownPrimary(forSlot slot: Int?) -> RedisNodePool? {
        guard let node = cluster.knownPrimary(forSlot: slot) else { return nil }
        return try? pool(at: node)
    }

    func primary(forSlot slot: Int?, on eventLoop: any EventLoop) -> EventLoopFuture<RedisNodePool> {
        if let known = knownPrimary(forSlot: slot) { return eventLoop.makeSucceededFuture(known) }
        return eventLoop.makeFutureWithTask { try self.pool(at: try await self.primaryAddress(forSlot: slot)) }
    }

    func primaries(on eventLoop: any EventLoop) -> EventLoopFuture<[RedisNodePool]> {
        eventLoop.makeFutureWithTask {
            _ = try await self.cluster.slotMap(read: self.slotMapReader())
            return try self.cluster.primaries.map { try self.pool(at: $0) }
        }
    }

    /// The primary serving `slot` per the map (read first if there is none), or for a keyless
    /// command any primary; a slot no primary serves is a connection error (`CLUSTERDOWN`).
    private func primaryAddress(forSlot slot: Int?) async throws -> RedisNodeAddress {
        let map = try await cluster.slotMap(read: slotMapReader())
        if let slot {
            guard let node = map.primary(forSlot: slot) else {
                refresh()
                throw RedisError.connection("no reachable primary serves cluster slot \(slot)")
            }
            return node
        }
        guard let node = map.primaries.randomElement() else { throw RedisError.connection("the cluster has no primary") }
        return node
    }

    /// The connections to `node`, made on first use.
    private func pool(at node: RedisNodeAddress) throws(RedisError) -> RedisNodePool {
        guard !isShutDown.load(ordering: .acquiring) else { throw .poolClosed }
        return nodePools.withLock { pools in
            if let pool = pools[node] { return pool }
            let pool = RedisNodePool(
                configuration: configuration.direct(to: node), eventLoopGroup: eventLoopGroup, logger: logger, observer: observer,
                onConnectionLost: { [weak self] in self?.refresh() }
            )
            pools[node] = pool
            return pool
        }
    }

    // MARK: Refusals

    func reroute(after message: String, from node: RedisNodePool) -> RedisReroute? {
        switch RedisRedirection(message: message, answeredBy: node.address) {
        case .moved(let slot, let target):
            observer?.redirected(.moved)
            cluster.moved(slot, to: target)
            refresh()
            return .again
        case .ask(_, let target):
            observer?.redirected(.ask)
            guard let pool = try? pool(at: target) else { return nil }
            return .asking(pool)
        case .tryAgain:
            refresh()
            return .after(Self.retryPause)
        case nil:
            return nil
        }
    }

    /// A node that cannot be reached may have failed over: read the map again.
    func lost(_ node: RedisNodePool) {
        refresh()
    }

    func readinessProblem() -> RedisError? {
        let uncovered = cluster.uncoveredSlots
        guard uncovered > 0 else { return nil }
        refresh()
        return RedisError.connection("\(uncovered) cluster slots have no reachable primary")
    }

    // MARK: The slot map

    /// Reads the slot map again soon (single-flight, rate-limited by ``RedisCluster``).
    func refresh() {
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
                    let connection = try await pool(at: node).connection(deadline: deadline)
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

    // MARK: Lifecycle

    func dropConnections() {
        for pool in nodePools.withLock({ Array($0.values) }) { pool.dropConnections() }
    }

    func shutdown() {
        isShutDown.store(true, ordering: .releasing)
        for pool in nodePools.withLock({ Array($0.values) }) { pool.shutdown() }
    }
}
