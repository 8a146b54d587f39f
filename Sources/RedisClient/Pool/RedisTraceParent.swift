import Tracing

/// The traced request a Redis call is made for, taken where the caller still runs inside it
/// (``RedisConnectionPool/currentTraceParent()``) and handed along to where the call is sent,
/// which may be a later loop tick with no task-local context left.
public struct RedisTraceParent: Sendable {
    let context: ServiceContext
}
