import Logging
import NIOCore
import NIOPosix
import ServiceLifecycle
import Tracing

/// Every Redis call of the gateway goes through here: a standalone Redis, the primary the
/// sentinels name, or every primary of a Redis Cluster, behind one API.
///
/// What differs between those three is a ``RedisTopologyPool`` chosen from the configuration
/// (``RedisStandalonePool``, ``RedisSentinelPool``, ``RedisClusterPool``), each over
/// ``RedisNodePool``s: a fixed set of pipelined connections per node, opened lazily and
/// reopened after any failure. Every call, however it is made, runs through one primitive on
/// an event loop (`RedisConnectionPool+EventLoop.swift`), which alone handles timeouts, the
/// observer, lost scripts and refusals; the async API (`RedisConnectionPool+Async.swift`)
/// waits on it.
///
/// No command waits for Redis longer than `configuration.timeout`, counted from the call:
/// connecting, redirections, writing and waiting for the reply all come out of that one budget.
///
/// As a `Service` it closes every connection after graceful shutdown, so it belongs before the
/// HTTP servers in a `ServiceGroup` (services stop in reverse order).
public final class RedisConnectionPool: Sendable, Service {
    public let configuration: RedisConfiguration
    /// Where its connections run: callers that keep per-loop state next to it (gathered
    /// rate-limit checks) make it for these loops up front.
    public let eventLoopGroup: any EventLoopGroup
    let logger: Logger
    let observer: RedisPoolObserver?
    /// Makes a span for each script run inside a traced request; nil: tracing is off.
    let tracer: (any Tracer)?
    /// Standalone, Sentinel or Cluster: where each call goes.
    let topologyPool: any RedisTopologyPool

    public init(
        configuration: RedisConfiguration,
        eventLoopGroup: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton,
        logger: Logger = Logger(label: "redis"),
        observer: RedisPoolObserver? = nil,
        tracer: (any Tracer)? = nil
    ) {
        self.configuration = configuration
        self.eventLoopGroup = eventLoopGroup
        self.logger = logger
        self.observer = observer
        self.tracer = tracer
        if let cluster = configuration.cluster {
            topologyPool = RedisClusterPool(
                configuration: configuration, cluster: cluster, eventLoopGroup: eventLoopGroup, logger: logger, observer: observer
            )
        } else if let sentinel = configuration.sentinel {
            topologyPool = RedisSentinelPool(
                configuration: configuration, sentinel: sentinel, eventLoopGroup: eventLoopGroup, logger: logger, observer: observer
            )
        } else {
            topologyPool = RedisStandalonePool(configuration: configuration, eventLoopGroup: eventLoopGroup, logger: logger, observer: observer)
        }
    }

    /// How Redis is deployed (`standalone`, `sentinel` or `cluster`) and the primaries in use.
    public var topology: (mode: String, primaries: [String]) {
        (topologyPool.mode, topologyPool.primaryNames)
    }

    /// Whether every call's keys must share one slot (Redis Cluster): callers that would
    /// touch several split their work by slot.
    public var keysMustShareASlot: Bool {
        configuration.cluster != nil
    }

    // MARK: Lifecycle

    /// Waits for graceful shutdown, then closes every connection.
    public func run() async throws {
        try? await gracefulShutdown()
        shutdown()
    }

    /// Reads a cluster's slot map again soon; nothing when not on a cluster. Public for
    /// whoever learns that Redis is back (the gateway's subscriber), so the map is read even
    /// with no traffic to read it.
    public func refreshSlotMap() {
        topologyPool.refresh()
    }

    /// Closes every open connection (after a failover); they redial on their next use.
    public func dropConnections() {
        topologyPool.dropConnections()
    }

    /// Closes every connection; later commands fail with ``RedisError/poolClosed``.
    public func shutdown() {
        topologyPool.shutdown()
    }
}
