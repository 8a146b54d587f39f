import GatewayPrimitives
import Logging
import NIOCore
import NIOPosix
import ServiceLifecycle
import Synchronization
import Tracing

/// Every Redis call of the gateway goes through here: a standalone Redis, the primary the
/// sentinels name, or every primary of a Redis Cluster, behind one API.
///
/// Below it sit ``RedisNodePool``s: one for the single primary, or one per cluster node, each
/// a fixed set of pipelined connections opened lazily and reopened after any failure. On a
/// cluster, every command goes to the primary of its key's slot (`RedisConnectionPool+Cluster`).
///
/// No command waits for Redis longer than `configuration.timeout`, counted from the call:
/// connecting, redirections, writing and waiting for the reply all come out of that one budget.
///
/// As a `Service` it closes every connection after graceful shutdown, so it belongs before the
/// HTTP servers in a `ServiceGroup` (services stop in reverse order).
public final class RedisConnectionPool: Sendable, Service {
    public let configuration: RedisConfiguration
    /// Standalone or Sentinel: the connections to the one primary. Nil on a cluster.
    private let primary: RedisNodePool?
    /// Redis Cluster: one pool per node, made when a command first needs that node.
    private let nodePools = Mutex<[RedisNodeAddress: RedisNodePool]>([:])
    private let isShutDown = Atomic<Bool>(false)
    /// Where its connections run: callers that keep per-loop state next to it (gathered
    /// rate-limit checks) make it for these loops up front.
    public let eventLoopGroup: any EventLoopGroup
    let logger: Logger
    let observer: RedisPoolObserver?
    /// Makes a span for each script run inside a traced request; nil: tracing is off.
    private let tracer: (any Tracer)?

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
        if configuration.cluster == nil {
            let sentinel = configuration.sentinel
            // A primary that dropped us may be gone: ask the sentinels before redialling.
            primary = RedisNodePool(
                configuration: configuration, eventLoopGroup: eventLoopGroup, logger: logger, observer: observer,
                onConnectionLost: { sentinel?.forgetPrimary() }
            )
        } else {
            primary = nil
        }
    }

    // MARK: Commands

    /// Sends one command; an error reply is thrown as ``RedisError/server(_:)``.
    public func send(_ command: RedisCommand) async throws -> RedisValue {
        try await observed(command.name) {
            let deadline = NIODeadline.now() + TimeAmount(configuration.timeout)
            guard let primary else {
                return try await exchange([command], slot: RedisHashSlot.of(command), deadline: deadline)[0].throwingServerError()
            }
            do {
                return try await primary.connection(deadline: deadline).send(command, deadline: deadline)
            } catch let error as RedisError where error.isReadOnly && configuration.sentinel != nil {
                // The primary was demoted and refused the command without running it, so
                // sending it once more, to the primary the sentinels name now, is safe.
                configuration.sentinel?.forgetPrimary()
                dropConnections()
                return try await primary.connection(deadline: deadline).send(command, deadline: deadline)
            }
        }
    }

    /// Sends every command in one round trip on one connection (on a cluster, one per node
    /// the keys live on, all at once); returns each reply, error replies included, in order.
    public func pipeline(_ commands: [RedisCommand]) async throws -> [RedisValue] {
        try await observed(commands.first?.name ?? "") {
            let deadline = NIODeadline.now() + TimeAmount(configuration.timeout)
            guard let primary else { return try await clusterPipeline(commands, deadline: deadline) }
            return try await primary.connection(deadline: deadline).pipeline(commands, deadline: deadline)
        }
    }

    /// `commands` in one write on one connection, to the node serving `slot` (any node when
    /// nil; the one primary when not a cluster); on a cluster, following redirections.
    private func pipelineOnOneNode(_ commands: [RedisCommand], slot: Int?) async throws -> [RedisValue] {
        try await observed(commands.first?.name ?? "") {
            let deadline = NIODeadline.now() + TimeAmount(configuration.timeout)
            guard let primary else { return try await exchange(commands, slot: slot, deadline: deadline) }
            return try await primary.connection(deadline: deadline).pipeline(commands, deadline: deadline)
        }
    }

    /// Runs `call`, telling the ``RedisPoolObserver`` (if any) how long it took and how it ended.
    private func observed<T>(_ name: String, _ call: () async throws -> T) async throws -> T {
        guard let observer else { return try await call() }
        observer.started()
        let started = ContinuousClock.now
        do {
            let result = try await call()
            observer.finished(name, .now - started, nil)
            return result
        } catch {
            observer.finished(name, .now - started, error as? RedisError ?? .connection("\(error)"))
            throw error
        }
    }

    /// Runs the commands inside `MULTI`/`EXEC` in one round trip. Nothing else can interleave:
    /// the whole block is one write on one connection. Returns `EXEC`'s replies. On a cluster
    /// every key must be in one slot (else ``RedisError/crossSlot(_:)``, nothing sent).
    public func transaction(_ commands: [RedisCommand]) async throws -> [RedisValue] {
        let slot = configuration.cluster == nil
            ? nil : try Self.commonSlot(of: commands.flatMap(\.keys).map(RedisHashSlot.of), in: "transaction")
        let replies = try await pipelineOnOneNode([.multi] + commands + [.exec], slot: slot)
        for reply in replies.dropLast() { _ = try reply.throwingServerError() }
        switch try replies.last?.throwingServerError() {
        case .array(let results): return results
        default: throw RedisError.server("EXECABORT transaction discarded")
        }
    }

    /// Runs a Lua script by `EVALSHA`, sending its source with `EVAL` only when Redis has lost
    /// it (after a restart or `SCRIPT FLUSH`), which also puts it back in Redis's script cache.
    /// On a cluster every key must be in one slot (else ``RedisError/crossSlot(_:)``), and
    /// `NOSCRIPT` comes from the node that lacks the script, so its `EVAL` goes there too.
    ///
    /// Inside a traced request (a tracer, and a `ServiceContext` in the task-local context)
    /// the run is a client span, child of the request's span: `db.system` `redis`,
    /// `db.operation` the script's name. Calls outside a request make no span.
    public func run(_ script: RedisScript, keys: [String], arguments: [String]) async throws -> RedisValue {
        guard let tracer, let parent = ServiceContext.current else {
            return try await runUntraced(script, keys: keys, arguments: arguments)
        }
        let span = tracer.startSpan(script.name, context: parent, ofKind: .client)
        span.updateAttributes { attributes in
            attributes["db.system"] = "redis"
            attributes["db.system.name"] = "redis"
            attributes["db.operation"] = script.name
            attributes["db.operation.name"] = script.name
            attributes["server.address"] = configuration.url.host
            attributes["server.port"] = configuration.url.port
        }
        defer { span.end() }
        do {
            return try await ServiceContext.$current.withValue(span.context) {
                try await runUntraced(script, keys: keys, arguments: arguments)
            }
        } catch {
            span.recordError(error)
            span.setStatus(SpanStatus(code: .error))
            throw error
        }
    }

    private func runUntraced(_ script: RedisScript, keys: [String], arguments: [String]) async throws -> RedisValue {
        if configuration.cluster != nil {
            _ = try Self.commonSlot(of: keys.map(RedisHashSlot.of), in: "script \(script.name)")
        }
        if configuration.waitReplicas > 0, script.waitsForReplicas {
            return try await runConfirmedByReplicas(script, keys: keys, arguments: arguments)
        }
        let started = ContinuousClock.now
        do {
            let reply: RedisValue
            do {
                reply = try await send(.evalsha(script, keys: keys, arguments: arguments))
            } catch let error as RedisError where error.isNoScript {
                logger.debug("redis lost a script, sending its source", metadata: ["script": "\(script.name)"])
                reply = try await send(.eval(script, keys: keys, arguments: arguments))
            }
            observer?.scriptFinished(script.name, .now - started, false)
            return reply
        } catch {
            observer?.scriptFinished(script.name, .now - started, true)
            throw error
        }
    }

    /// The script and `WAIT` in one write on one connection, so `WAIT` covers exactly this
    /// script's writes; fewer confirmations than `waitReplicas` within half of the timeout is
    /// a ``RedisError/timeout(_:)`` (the caller's 503). The write did happen on the primary
    /// then: what is lost is only the promise that a failover keeps it.
    private func runConfirmedByReplicas(_ script: RedisScript, keys: [String], arguments: [String]) async throws -> RedisValue {
        let wait = RedisCommand.wait(replicas: configuration.waitReplicas, timeout: configuration.timeout / 2)
        let slot = keys.first.map(RedisHashSlot.of)
        var replies = try await pipelineOnOneNode([.evalsha(script, keys: keys, arguments: arguments), wait], slot: slot)
        if case .error(let message) = replies.first, message.hasPrefix("NOSCRIPT") {
            logger.debug("redis lost a script, sending its source", metadata: ["script": "\(script.name)"])
            replies = try await pipelineOnOneNode([.eval(script, keys: keys, arguments: arguments), wait], slot: slot)
        }
        guard replies.count == 2 else { throw RedisError.protocolViolation("script and WAIT returned \(replies.count) replies") }
        let value = try replies[0].throwingServerError()
        let confirmed = try replies[1].throwingServerError().int ?? 0
        guard confirmed >= configuration.waitReplicas else {
            throw RedisError.timeout("\(confirmed) of \(configuration.waitReplicas) replicas confirmed \(script.name) in time")
        }
        return value
    }

    /// `PING` within the timeout: what `/readyz` asks. On a cluster every primary must answer
    /// and every slot must have one.
    public func ping() async throws {
        guard configuration.cluster != nil else {
            _ = try await send(.ping())
            return
        }
        try await pingEveryPrimary()
    }

    /// Sends `command` (one without keys: `INFO`, `CONFIG GET`) to every primary, for checks
    /// that must hold on each; one reply, from the one primary, when not a cluster. Error
    /// replies are returned, not thrown.
    public func sendToEveryPrimary(_ command: RedisCommand) async throws -> [(node: String, reply: RedisValue)] {
        guard configuration.cluster != nil else {
            return [("\(configuration.url.host):\(configuration.url.port)", try await pipeline([command])[0])]
        }
        return try await clusterSendToEveryPrimary(command)
    }

    /// How Redis is deployed (`standalone`, `sentinel` or `cluster`) and the primaries in use.
    public var topology: (mode: String, primaries: [String]) {
        if let cluster = configuration.cluster { return ("cluster", cluster.primaries.map(\.description)) }
        if let sentinel = configuration.sentinel { return ("sentinel", sentinel.currentPrimary.map { ["\($0)"] } ?? []) }
        return ("standalone", ["\(configuration.url.host):\(configuration.url.port)"])
    }

    // MARK: Nodes

    /// The connections to `node`, made on first use (cluster only).
    func nodePool(at node: RedisNodeAddress) throws -> RedisNodePool {
        if let primary { return primary }
        guard !isShutDown.load(ordering: .acquiring) else { throw RedisError.poolClosed }
        return nodePools.withLock { pools in
            if let pool = pools[node] { return pool }
            let pool = RedisNodePool(
                configuration: configuration.direct(to: node), eventLoopGroup: eventLoopGroup, logger: logger, observer: observer,
                onConnectionLost: { [weak self] in self?.refreshSlotMap() }
            )
            pools[node] = pool
            return pool
        }
    }

    /// The pool serving `slot` (any primary when nil): the seam every call routes through,
    /// and the one a caller that picks its own connection (`connection(deadline:)` on the
    /// result, preferring the caller's event loop) should use too.
    func nodePool(forSlot slot: Int?) async throws -> RedisNodePool {
        if let primary { return primary }
        return try nodePool(at: try await clusterPrimary(forSlot: slot))
    }

    /// The pool serving `slot` without waiting: the one primary, or on a cluster the slot's
    /// primary per the map already read (nil before the first read, or for a slot no primary
    /// serves). For a caller that cannot suspend (a future-returning call on an event loop):
    /// on nil, or on an error reply it cannot follow (`MOVED`, `ASK`), it takes the async path.
    func nodePoolIfKnown(forSlot slot: Int?) -> RedisNodePool? {
        if let primary { return primary }
        guard let cluster = configuration.cluster, let node = cluster.knownPrimary(forSlot: slot) else { return nil }
        return try? nodePool(at: node)
    }

    /// A connection that can take `call` now, without waiting: one on `eventLoop` (the
    /// caller's) to the primary serving its keys' slot, as far as the pool already knows it.
    /// Nil when that is not known or not connected (dialling, backing off, closed, slot map not
    /// read yet, keys of several cluster slots): the caller then takes the asynchronous path,
    /// which dials, waits and follows redirections. The future-returning calls
    /// (`RedisConnectionPool+EventLoop.swift`) are built on this alone.
    func readyConnection(for call: RedisScriptCall, on eventLoop: any EventLoop) -> RedisConnection? {
        var slot: Int?
        if configuration.cluster != nil {
            guard case .success(let common) = call.slot else { return nil }
            slot = common
        }
        return nodePoolIfKnown(forSlot: slot)?.readyConnection(on: eventLoop)
    }

    /// The one slot all `slots` share (nil when there are none); throws when they differ.
    static func commonSlot(of slots: [Int], in what: String) throws(RedisError) -> Int? {
        guard let first = slots.first else { return nil }
        guard slots.allSatisfy({ $0 == first }) else {
            throw RedisError.crossSlot("\(what) names keys of \(Set(slots).count) cluster slots; it must stay in one")
        }
        return first
    }

    // MARK: Lifecycle

    /// Waits for graceful shutdown, then closes every connection.
    public func run() async throws {
        try? await gracefulShutdown()
        shutdown()
    }

    /// Closes every open connection (after a failover); they redial on their next use.
    public func dropConnections() {
        primary?.dropConnections()
        for pool in nodePools.withLock({ Array($0.values) }) { pool.dropConnections() }
    }

    /// Closes every connection; later commands fail with ``RedisError/poolClosed``.
    public func shutdown() {
        isShutDown.store(true, ordering: .releasing)
        primary?.shutdown()
        for pool in nodePools.withLock({ Array($0.values) }) { pool.shutdown() }
    }
}
