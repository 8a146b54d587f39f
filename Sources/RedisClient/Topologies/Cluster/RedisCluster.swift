import Synchronization

/// Redis Cluster (`redis.cluster`): the seed nodes, and the slot map read from them.
///
/// One instance is shared (through ``RedisConfiguration``) by the pool and the subscriber, so
/// both know the same primaries. The map is read once on first use and then again, by one
/// reader at a time and at most every ``minimumRefreshInterval``, when a node answers
/// `MOVED` or a node's connection breaks; `MOVED` also corrects its one slot at once, so a
/// command never waits for a full read. A refresh asked for while a read is under way or too
/// soon after one is not dropped but made once the interval has passed: the `MOVED` of a
/// failover often comes right after the reads a migration started, and corrects its slot so
/// well that no other `MOVED` follows, which left the primaries (and the failover metrics)
/// stale until the next topology change.
public final class RedisCluster: Sendable {
    private struct State {
        var map: RedisClusterSlotMap?
        /// The primaries of the last full read (a `MOVED` changes `map` only), so a promoted
        /// replica counts as a failover even when a `MOVED` named it first.
        var readPrimaries: [RedisNodeAddress]?
        var reading: Task<RedisClusterSlotMap, any Error>?
        var lastRead: ContinuousClock.Instant?
        /// A refresh was asked for that the read under way, or the interval, held back.
        var refreshHeldBack = false
        /// A read is scheduled for when the interval has passed.
        var trailingScheduled = false
        var failovers = 0
        var cursor = 0
        var observers: [@Sendable (_ primaries: [RedisNodeAddress], _ isFailover: Bool) -> Void] = []
    }

    /// Where the map is first asked for; any reachable node of the cluster will do.
    public let seeds: [RedisNodeAddress]
    /// The shortest time between two reads of the map, however many `MOVED` replies arrive.
    public let minimumRefreshInterval: Duration
    private let state = Mutex(State())

    public init(seeds: [RedisNodeAddress], minimumRefreshInterval: Duration = .milliseconds(100)) {
        self.seeds = seeds
        self.minimumRefreshInterval = minimumRefreshInterval
    }

    /// The primaries of the last map read, in slot order; empty before the first read.
    public var primaries: [RedisNodeAddress] { state.withLock { $0.map?.primaries ?? [] } }
    /// Slots no known primary serves (all of them before the first read).
    public var uncoveredSlots: Int { state.withLock { $0.map?.uncoveredSlots ?? RedisHashSlot.count } }
    /// Map reads that found a primary that was not one before (a replica promoted).
    public var failoversSeen: Int { state.withLock { $0.failovers } }

    /// Runs `action` with the primaries after every read that changed them (`isFailover`:
    /// a node became primary that was not one before), and at once if a map is known.
    public func onPrimaries(_ action: @escaping @Sendable (_ primaries: [RedisNodeAddress], _ isFailover: Bool) -> Void) {
        let known = state.withLock { state in
            state.observers.append(action)
            return state.map?.primaries
        }
        if let known { action(known, false) }
    }

    /// The nodes to ask for the map or to subscribe on: known primaries, then the seeds,
    /// starting at a different one each call so a dead node is not always tried first.
    func candidates() -> [RedisNodeAddress] {
        let (known, turn) = state.withLock { state in
            state.cursor &+= 1
            return (state.map?.primaries ?? [], state.cursor)
        }
        var nodes = known
        for seed in seeds where !nodes.contains(seed) { nodes.append(seed) }
        guard !nodes.isEmpty else { return [] }
        let start = Int(UInt(bitPattern: turn) % UInt(nodes.count))
        return Array(nodes[start...] + nodes[..<start])
    }

    /// The current map, read with `read` when there is none yet (one read for all callers).
    func slotMap(read: @escaping @Sendable () async throws -> RedisClusterSlotMap) async throws -> RedisClusterSlotMap {
        enum Next { case known(RedisClusterSlotMap), wait(Task<RedisClusterSlotMap, any Error>) }
        let next: Next = state.withLock { state in
            if let map = state.map { return .known(map) }
            return .wait(startReading(&state, read))
        }
        switch next {
        case .known(let map): return map
        case .wait(let task): return try await task.value
        }
    }

    /// Reads the map again in the background, unless a read is under way or the last one
    /// was less than ``minimumRefreshInterval`` ago.
    func refresh(read: @escaping @Sendable () async throws -> RedisClusterSlotMap) {
        let wait: Duration? = state.withLock { state in
            if state.reading != nil {
                state.refreshHeldBack = true
                return nil
            }
            if let last = state.lastRead, ContinuousClock.now - last < minimumRefreshInterval {
                guard !state.trailingScheduled else { return nil }
                state.trailingScheduled = true
                return minimumRefreshInterval - (ContinuousClock.now - last)
            }
            _ = startReading(&state, read)
            return nil
        }
        guard let wait else { return }
        Task {
            try? await Task.sleep(for: wait)
            self.state.withLock { $0.trailingScheduled = false }
            self.refresh(read: read)
        }
    }

    /// The primary of `slot` (any primary when nil) per the map already read, without reading.
    func knownPrimary(forSlot slot: Int?) -> RedisNodeAddress? {
        state.withLock { state in
            guard let map = state.map else { return nil }
            guard let slot else { return map.primaries.first }
            return map.primary(forSlot: slot)
        }
    }

    /// A node answered `MOVED slot node`: route that slot there from now on.
    func moved(_ slot: Int, to node: RedisNodeAddress) {
        state.withLock { state in
            state.map = state.map.map { $0.moving(slot, to: node) }
        }
    }

    private func startReading(
        _ state: inout State, _ read: @escaping @Sendable () async throws -> RedisClusterSlotMap
    ) -> Task<RedisClusterSlotMap, any Error> {
        if let reading = state.reading { return reading }
        let task = Task {
            do {
                let map = try await read()
                if learn(map) { self.refresh(read: read) }
                return map
            } catch {
                let again = self.state.withLock { state in
                    state.reading = nil
                    state.lastRead = .now
                    defer { state.refreshHeldBack = false }
                    return state.refreshHeldBack
                }
                if again { self.refresh(read: read) }
                throw error
            }
        }
        state.reading = task
        return task
    }

    /// Takes a map just read; returns whether a refresh was asked for during the read.
    private func learn(_ map: RedisClusterSlotMap) -> Bool {
        let (observers, changed, isFailover, again) = state.withLock { state in
            let before = state.readPrimaries
            let isFailover = before.map { old in map.primaries.contains { !old.contains($0) } } ?? false
            if isFailover { state.failovers += 1 }
            state.map = map
            state.readPrimaries = map.primaries
            state.reading = nil
            state.lastRead = .now
            defer { state.refreshHeldBack = false }
            return (state.observers, before.map(Set.init) != Set(map.primaries), isFailover, state.refreshHeldBack)
        }
        if changed {
            for observer in observers { observer(map.primaries, isFailover) }
        }
        return again
    }
}
