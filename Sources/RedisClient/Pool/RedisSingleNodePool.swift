import NIOCore

/// A deployment with one primary (standalone, or Sentinel's): every call goes to ``node``,
/// so slots never matter and the node is always known.
protocol RedisSingleNodePool: RedisTopologyPool {
    var node: RedisNodePool { get }
}

extension RedisSingleNodePool {
    func slot(of keys: [String], in what: @autoclosure () -> String) throws(RedisError) -> Int? { nil }
    func slot(of call: RedisScriptCall) throws(RedisError) -> Int? { nil }

    func knownPrimary(forSlot slot: Int?) -> RedisNodePool? { node }

    func primary(forSlot slot: Int?, on eventLoop: any EventLoop) -> EventLoopFuture<RedisNodePool> {
        eventLoop.makeSucceededFuture(node)
    }

    func primaries(on eventLoop: any EventLoop) -> EventLoopFuture<[RedisNodePool]> {
        eventLoop.makeSucceededFuture([node])
    }

    func lost(_ node: RedisNodePool) {}
    func readinessProblem() -> RedisError? { nil }
    func refresh() {}
    func dropConnections() { node.dropConnections() }
    func shutdown() { node.shutdown() }
}
