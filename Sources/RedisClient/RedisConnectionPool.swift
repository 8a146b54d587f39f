import GatewayPrimitives
import Logging
import NIOCore
import NIOPosix
import ServiceLifecycle
import Synchronization
import Tracing

/// A fixed set of pipelined Redis connections, spread over the event loops, opened lazily
/// and reopened after any failure (a Redis restart, a timeout, a protocol error).
///
/// No command waits for Redis longer than `configuration.timeout`, counted from the call:
/// connecting, writing and waiting for the reply all come out of that one budget. While Redis
/// is down each slot retries at most once per `reconnectBackoff`, and in between fails at once.
///
/// As a `Service` it closes every connection after graceful shutdown, so it belongs before the
/// HTTP servers in a `ServiceGroup` (services stop in reverse order).
public final class RedisConnectionPool: Sendable, Service {
    public let configuration: RedisConfiguration
    private let slots: [Slot]
    /// The slots of each event loop, so a caller running on a loop is given a connection on
    /// that same loop: its command and reply then cost no thread hop.
    private let slotsByLoop: [ObjectIdentifier: [Slot]]
    private let cursor = Atomic<Int>(0)
    private let logger: Logger
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
        self.logger = logger
        self.observer = observer
        self.tracer = tracer
        let slots = (0..<configuration.poolSize).map { _ in Slot(eventLoop: eventLoopGroup.next()) }
        self.slots = slots
        self.slotsByLoop = Dictionary(grouping: slots) { ObjectIdentifier($0.eventLoop) }
    }

    // MARK: Commands

    /// Sends one command; an error reply is thrown as ``RedisError/server(_:)``.
    public func send(_ command: RedisCommand) async throws -> RedisValue {
        try await observed(command.name) {
            let deadline = NIODeadline.now() + TimeAmount(configuration.timeout)
            do {
                return try await connection(deadline: deadline).send(command, deadline: deadline)
            } catch let error as RedisError where error.isReadOnly && configuration.sentinel != nil {
                // The primary was demoted and refused the command without running it, so
                // sending it once more, to the primary the sentinels name now, is safe.
                configuration.sentinel?.forgetPrimary()
                dropConnections()
                return try await connection(deadline: deadline).send(command, deadline: deadline)
            }
        }
    }

    public func send(_ name: String, _ arguments: String...) async throws -> RedisValue {
        try await send(RedisCommand(name, arguments))
    }

    /// Sends every command in one round trip on one connection; returns each reply, error
    /// replies included, in order.
    public func pipeline(_ commands: [RedisCommand]) async throws -> [RedisValue] {
        try await observed(commands.first?.name ?? "") {
            let deadline = NIODeadline.now() + TimeAmount(configuration.timeout)
            return try await connection(deadline: deadline).pipeline(commands, deadline: deadline)
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
    /// the whole block is one write on one connection. Returns `EXEC`'s replies.
    public func transaction(_ commands: [RedisCommand]) async throws -> [RedisValue] {
        let replies = try await pipeline([RedisCommand("MULTI")] + commands + [RedisCommand("EXEC")])
        for reply in replies.dropLast() { _ = try reply.throwingServerError() }
        switch try replies.last?.throwingServerError() {
        case .array(let results): return results
        default: throw RedisError.server("EXECABORT transaction discarded")
        }
    }

    /// Runs a Lua script by `EVALSHA`, sending its source with `EVAL` only when Redis has lost
    /// it (after a restart or `SCRIPT FLUSH`), which also puts it back in Redis's script cache.
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
        if configuration.waitReplicas > 0, script.waitsForReplicas {
            return try await runConfirmedByReplicas(script, keys: keys, arguments: arguments)
        }
        let started = ContinuousClock.now
        do {
            let reply: RedisValue
            do {
                reply = try await send(script.evalSHA(keys: keys, arguments: arguments))
            } catch let error as RedisError where error.isNoScript {
                logger.debug("redis lost a script, sending its source", metadata: ["script": "\(script.name)"])
                reply = try await send(script.eval(keys: keys, arguments: arguments))
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
        let waitMilliseconds = max(1, configuration.timeout.inMilliseconds / 2)
        let wait = RedisCommand("WAIT", String(configuration.waitReplicas), String(waitMilliseconds))
        var replies = try await pipeline([script.evalSHA(keys: keys, arguments: arguments), wait])
        if case .error(let message) = replies.first, message.hasPrefix("NOSCRIPT") {
            logger.debug("redis lost a script, sending its source", metadata: ["script": "\(script.name)"])
            replies = try await pipeline([script.eval(keys: keys, arguments: arguments), wait])
        }
        guard replies.count == 2 else { throw RedisError.protocolViolation("script and WAIT returned \(replies.count) replies") }
        let value = try replies[0].throwingServerError()
        let confirmed = try replies[1].throwingServerError().int ?? 0
        guard confirmed >= configuration.waitReplicas else {
            throw RedisError.timeout("\(confirmed) of \(configuration.waitReplicas) replicas confirmed \(script.name) in time")
        }
        return value
    }

    /// `PING` within the timeout: what `/readyz` asks.
    public func ping() async throws {
        _ = try await send(RedisCommand("PING"))
    }

    // MARK: Connections

    private func connection(deadline: NIODeadline) async throws -> RedisConnection {
        let turn = Int(UInt(bitPattern: cursor.add(1, ordering: .relaxed).oldValue) % UInt(Int.max))
        let local = MultiThreadedEventLoopGroup.currentEventLoop.flatMap { slotsByLoop[ObjectIdentifier($0)] } ?? slots
        let slot = local[turn % local.count]
        let now = NIODeadline.now()
        let backoff = TimeAmount(configuration.reconnectBackoff)
        enum Next {
            case use(RedisConnection)
            case wait(EventLoopFuture<RedisConnection>)
            case dial(EventLoopPromise<RedisConnection>)
            case fail(RedisError)
        }
        let next: Next = slot.state.withLock { state in
            switch state {
            case .connected(let connection) where connection.isActive:
                return .use(connection)
            case .connecting(let future):
                return .wait(future)
            case .failed(let at, let error) where now < at + backoff:
                return .fail(error)
            case .closed:
                return .fail(.poolClosed)
            case .connected, .failed, .idle:
                let promise = slot.eventLoop.makePromise(of: RedisConnection.self)
                state = .connecting(promise.futureResult)
                return .dial(promise)
            }
        }
        switch next {
        case .use(let connection):
            return connection
        case .fail(let error):
            // This slot's last dial failed moments ago; another slot may already be back.
            if let healthy = anyHealthyConnection() { return healthy }
            throw error
        case .wait(let future):
            return try await future.get()
        case .dial(let promise):
            dial(slot, promise: promise, budget: Duration(deadline - now))
            return try await promise.futureResult.get()
        }
    }

    /// A connection that can take `keys`' command now, without waiting: one of a slot on
    /// `eventLoop` (the caller's) when the pool has slots there. Nil when that slot is not
    /// connected (dialling, backing off, closed): the caller then takes the asynchronous
    /// path, which dials and waits. The future-returning calls
    /// (`RedisConnectionPool+EventLoop.swift`) are built on this alone.
    func readyConnection(for keys: [String], on eventLoop: any EventLoop) -> RedisConnection? {
        let local = slotsByLoop[ObjectIdentifier(eventLoop)] ?? slots
        let turn = Int(UInt(bitPattern: cursor.add(1, ordering: .relaxed).oldValue) % UInt(Int.max))
        return local[turn % local.count].state.withLock { state in
            if case .connected(let connection) = state, connection.isActive { return connection }
            return nil
        }
    }

    private func anyHealthyConnection() -> RedisConnection? {
        for slot in slots {
            let connection: RedisConnection? = slot.state.withLock { state in
                if case .connected(let connection) = state, connection.isActive { return connection }
                return nil
            }
            if let connection { return connection }
        }
        return nil
    }

    private func dial(_ slot: Slot, promise: EventLoopPromise<RedisConnection>, budget: Duration) {
        let configuration = self.configuration
        let logger = self.logger
        let observer = self.observer
        promise.completeWithTask {
            do {
                let connection = try await RedisConnection.connect(using: configuration, on: slot.eventLoop, timeout: budget)
                let stillWanted = slot.state.withLock { state in
                    if case .closed = state { return false }
                    state = .connected(connection)
                    return true
                }
                guard stillWanted else {
                    connection.close()
                    throw RedisError.poolClosed
                }
                observer?.dialed(true)
                connection.channel.closeFuture.whenComplete { _ in
                    let lost = slot.state.withLock { state in
                        guard case .connected(let current) = state, current === connection else { return false }
                        state = .idle
                        return true
                    }
                    // A primary that dropped us may be gone: ask the sentinels before redialling.
                    if lost { configuration.sentinel?.forgetPrimary() }
                }
                return connection
            } catch {
                let failure = error as? RedisError ?? .connection("\(error)")
                slot.state.withLock { state in
                    if case .closed = state { return }
                    state = .failed(at: .now(), failure)
                }
                observer?.dialed(false)
                logger.debug("redis connection failed", metadata: ["error": "\(failure)"])
                throw failure
            }
        }
    }

    // MARK: Lifecycle

    /// Waits for graceful shutdown, then closes every connection.
    public func run() async throws {
        try? await gracefulShutdown()
        shutdown()
    }

    /// Closes every open connection (after a failover); the slots redial on their next use.
    public func dropConnections() {
        for slot in slots {
            let connection: RedisConnection? = slot.state.withLock { state in
                if case .connected(let connection) = state { return connection }
                return nil
            }
            connection?.close()
        }
    }

    /// Closes every connection; later commands fail with ``RedisError/poolClosed``.
    public func shutdown() {
        for slot in slots {
            let connection: RedisConnection? = slot.state.withLock { state in
                defer { state = .closed }
                if case .connected(let connection) = state { return connection }
                return nil
            }
            connection?.close()
        }
    }
}

extension RedisConnectionPool {
    /// One place in the pool: at most one connection, and what happened to the last attempt.
    fileprivate final class Slot: Sendable {
        enum State {
            case idle
            case connecting(EventLoopFuture<RedisConnection>)
            case connected(RedisConnection)
            case failed(at: NIODeadline, RedisError)
            case closed
        }

        let eventLoop: any EventLoop
        let state = Mutex(State.idle)

        init(eventLoop: any EventLoop) {
            self.eventLoop = eventLoop
        }
    }
}
