import NIOCore

/// What differs between a standalone Redis (``RedisStandalonePool``), the primary Sentinel
/// names (``RedisSentinelPool``) and a Redis Cluster (``RedisClusterPool``): which node serves
/// a call, and what a refusal from a node means. ``RedisConnectionPool`` picks one from the
/// configuration and runs every call the same way on top of it.
protocol RedisTopologyPool: Sendable {
    /// `standalone`, `sentinel` or `cluster`, for `/readyz` and the admin topology.
    var mode: String { get }
    /// The primaries in use, as `host:port`.
    var primaryNames: [String] { get }

    /// The slot a call on `keys` goes to, or nil where slots do not matter (one primary).
    /// Throws ``RedisError/crossSlot(_:)`` when a cluster cannot run them in one call.
    func slot(of keys: [String], in what: @autoclosure () -> String) throws(RedisError) -> Int?
    /// The same for a prepared script call, whose slot was worked out once.
    func slot(of call: RedisScriptCall) throws(RedisError) -> Int?

    /// The pool of `slot`'s primary (any primary for nil) when known without waiting: the
    /// path a rate-limit check on an event loop takes.
    func knownPrimary(forSlot slot: Int?) -> RedisNodePool?
    /// The same, learning the deployment first when it must (a cluster's first map read).
    func primary(forSlot slot: Int?, on eventLoop: any EventLoop) -> EventLoopFuture<RedisNodePool>
    /// Every primary, for checks that must hold on each.
    func primaries(on eventLoop: any EventLoop) -> EventLoopFuture<[RedisNodePool]>

    /// Where to send a command again that `node` refused with `message` without running it;
    /// nil when the refusal is the response.
    func reroute(after message: String, from node: RedisNodePool) -> RedisReroute?
    /// `node` could not be reached, or broke or timed out during a call.
    func lost(_ node: RedisNodePool)
    /// Why the deployment cannot answer every key although each primary answers (a cluster
    /// slot without a primary); nil when it can.
    func readinessProblem() -> RedisError?

    /// Reads a cluster's slot map again soon; nothing elsewhere.
    func refresh()
    func dropConnections()
    func shutdown()
}
