import NIOCore
import Synchronization

/// Finds the current primary through Redis Sentinel (`redis.sentinel`), and forgets it as soon
/// as there is reason to doubt it.
///
/// One instance is shared (through ``RedisConfiguration``) by the pool and the subscriber, so
/// they always agree on the primary. The address is asked of the sentinels, in the configured
/// order, with `SENTINEL get-master-addr-by-name`, and kept until:
/// - a connection to it fails or breaks (the next dial asks again);
/// - Redis answers `READONLY` (it was demoted; ``RedisSentinelPool`` sends the command again);
/// - a sentinel announces `+switch-master` (``switched(to:)``, from ``RedisSentinelWatcher``).
public final class RedisSentinel: Sendable {
    /// A sentinel's or a primary's `host:port`.
    public typealias Node = RedisNodeAddress

    private struct State {
        var primary: Node?
        var lastPrimary: Node?
        var lastAnnounced: Node?
        var failovers = 0
        var observers: [@Sendable (_ primary: Node, _ isFailover: Bool) -> Void] = []
    }

    public let masterName: String
    public let nodes: [Node]
    /// The sentinels' own password (their `requirepass`), if any.
    let password: String?
    private let state = Mutex(State())

    public init(masterName: String, nodes: [Node], password: String? = nil) {
        self.masterName = masterName
        self.nodes = nodes
        self.password = password
    }

    /// The primary last discovered, if it is still trusted.
    public var currentPrimary: Node? { state.withLock { $0.primary } }
    /// How many failovers the sentinels announced since start-up.
    public var failoversSeen: Int { state.withLock { $0.failovers } }

    /// Runs `action` with each primary found at a new address (`isFailover` false) and with
    /// each one a failover announced (true), so connections to the old one are dropped and
    /// metrics name the new one. A primary already found is reported to `action` at once.
    public func onPrimary(_ action: @escaping @Sendable (_ primary: Node, _ isFailover: Bool) -> Void) {
        let known = state.withLock { state in
            state.observers.append(action)
            return state.lastPrimary
        }
        if let known { action(known, false) }
    }

    /// Stops trusting the known primary: the next connection asks the sentinels again.
    public func forgetPrimary() {
        state.withLock { $0.primary = nil }
    }

    /// A sentinel announced a new primary (`+switch-master`). Each sentinel announces it, and
    /// while they converge one may still name the old primary when asked, so only an
    /// announcement of a node not announced before counts as a failover.
    public func switched(to node: Node) {
        let isNew = state.withLock { state in
            defer { state.lastAnnounced = node }
            return state.lastAnnounced != node
        }
        record(node, failover: isNew)
    }

    /// `url` pointed at the current primary, asking the sentinels when none is known.
    func primaryURL(for url: RedisURL, tls: RedisTLS?, on eventLoop: any EventLoop, timeout: Duration) async throws -> RedisURL {
        let node: Node
        if let known = currentPrimary {
            node = known
        } else {
            node = try await discover(url: url, tls: tls, on: eventLoop, timeout: timeout)
        }
        return node.url(from: url)
    }

    private func discover(url: RedisURL, tls: RedisTLS?, on eventLoop: any EventLoop, timeout: Duration) async throws -> Node {
        var failures: [String] = []
        for sentinel in nodes {
            do {
                let address = RedisURL(host: sentinel.host, port: sentinel.port, password: password, usesTLS: url.usesTLS)
                let connection = try await RedisConnection.connect(to: address, tls: tls, on: eventLoop, timeout: timeout)
                defer { connection.close() }
                let reply = try await connection.send(
                    .sentinelPrimary(of: masterName), deadline: .now() + TimeAmount(timeout)
                )
                guard let parts = reply.array, parts.count == 2, let host = parts[0].string, let port = parts[1].int else {
                    failures.append("\(sentinel): does not know \(masterName)")
                    continue
                }
                let node = Node(host: host, port: Int(port))
                record(node, failover: false)
                return node
            } catch {
                failures.append("\(sentinel): \(error)")
            }
        }
        throw RedisError.connection("no sentinel named the primary of \(masterName) (\(failures.joined(separator: "; ")))")
    }

    private func record(_ node: Node, failover: Bool) {
        let (observers, changed) = state.withLock { state in
            state.primary = node
            defer { state.lastPrimary = node }
            if failover { state.failovers += 1 }
            return (state.observers, state.lastPrimary != node)
        }
        guard changed || failover else { return }
        for observer in observers { observer(node, failover) }
    }
}
