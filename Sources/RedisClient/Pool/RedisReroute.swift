import NIOCore

/// Where a ``RedisTopologyPool`` sends a command again that a node refused without running
/// it (`READONLY`, `MOVED`, `ASK`, `TRYAGAIN`, `CLUSTERDOWN`).
enum RedisReroute: Sendable {
    /// Route it again: the deployment's idea of the primary has just been corrected.
    case again
    /// Once to that node, preceded by `ASKING` (a cluster slot in migration).
    case asking(RedisNodePool)
    /// Route it again after a pause, if the call's deadline allows one.
    case after(TimeAmount)
}
