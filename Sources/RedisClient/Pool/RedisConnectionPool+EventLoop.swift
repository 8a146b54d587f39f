import Logging
import NIOCore
import Tracing

/// The one way a call reaches Redis: ``execute(_:on:answering:)`` runs a ``RedisRequest`` on an
/// event loop and hands its reply to a callback there (``execute(_:on:)`` completes a future
/// with it). Every rule of a call is here, once: its timeout budget,
/// the observer's callbacks, `NOSCRIPT` (the script's source is sent, once), and a node's
/// refusals (`READONLY` under Sentinel, `MOVED`/`ASK`/`TRYAGAIN` on a cluster), which the
/// ``RedisTopologyPool`` turns into where to send the call again.
///
/// When the node is known and a connection to it is open on the caller's loop (the usual
/// case), the call is written there (one flush per loop tick) and its reply reaches the caller
/// on the same thread: no task, no executor hop, no formatting of a prepared script.
extension RedisConnectionPool {
    /// More retries than this for one call means the deployment is changing faster than it
    /// can be followed; the last reply is the response.
    static let maximumRetries = 5

    /// How a call made without a future hears its reply (an error reply included, except a
    /// script's, which fails it), on the loop it named.
    public typealias Replied = @Sendable (Result<RedisValue, any Error>) -> Void

    /// Runs a prepared script call: its reply completes a future on `eventLoop`, and an error
    /// reply fails it as ``RedisError/server(_:)``. With `redis.wait_replicas`, a script that
    /// asks for it is answered once that many replicas confirmed it (``RedisScript/waitsForReplicas``).
    ///
    /// Under a traced request (`parent`, and a tracer) the run is a client span, child of the
    /// request's span: `db.system` `redis`, `db.operation` the script's name.
    public func run(_ call: RedisScriptCall, on eventLoop: any EventLoop, tracedUnder parent: RedisTraceParent? = nil) -> EventLoopFuture<RedisValue> {
        Self.future(on: eventLoop) { run(call, on: eventLoop, tracedUnder: parent, replied: $0) }
    }

    /// ``run(_:on:tracedUnder:)-(RedisScriptCall,_,_)`` for a caller on `eventLoop` that takes
    /// the reply in a callback there: no promise and no future per call.
    public func run(_ call: RedisScriptCall, on eventLoop: any EventLoop, tracedUnder parent: RedisTraceParent? = nil, replied: @escaping Replied) {
        let slot: Int?
        do {
            slot = try topologyPool.slot(of: call)
        } catch {
            replied(.failure(error))
            return
        }
        let confirmations = call.script.waitsForReplicas ? configuration.waitReplicas : 0
        let request = RedisRequest(call, to: .slot(slot), confirmations: confirmations, waitTimeout: configuration.timeout / 2)
        execute(request, on: eventLoop, answering: traced(call.script.name, under: parent, replied))
    }

    /// Runs one command: its reply (an error reply included) completes a future on
    /// `eventLoop`. With `redis.wait_replicas` and `waitsForReplicas`, it is answered once
    /// that many replicas confirmed it, exactly as a script is (an error reply then fails it).
    public func run(
        _ command: RedisCommand, waitsForReplicas: Bool, on eventLoop: any EventLoop, tracedUnder parent: RedisTraceParent? = nil
    ) -> EventLoopFuture<RedisValue> {
        Self.future(on: eventLoop) { run(command, waitsForReplicas: waitsForReplicas, on: eventLoop, tracedUnder: parent, replied: $0) }
    }

    /// The same, for a caller on `eventLoop` that takes the reply in a callback there.
    public func run(
        _ command: RedisCommand, waitsForReplicas: Bool, on eventLoop: any EventLoop, tracedUnder parent: RedisTraceParent? = nil,
        replied: @escaping Replied
    ) {
        let slot: Int?
        do {
            slot = try topologyPool.slot(of: command.keys, in: command.name)
        } catch {
            replied(.failure(error))
            return
        }
        let request = RedisRequest(
            command, to: .slot(slot), confirmations: waitsForReplicas ? configuration.waitReplicas : 0, waitTimeout: configuration.timeout / 2
        )
        execute(request, on: eventLoop, answering: traced(command.name, under: parent, replied))
    }

    /// `replied`, as a client span (child of `parent`'s) when tracing: `db.system` `redis`,
    /// `db.operation` the script's or command's name.
    private func traced(_ operation: String, under parent: RedisTraceParent?, _ replied: @escaping Replied) -> Replied {
        guard let tracer, let parent else { return replied }
        let span = tracer.startSpan(operation, context: parent.context, ofKind: .client)
        span.updateAttributes { attributes in
            attributes["db.system"] = "redis"
            attributes["db.system.name"] = "redis"
            attributes["db.operation"] = operation
            attributes["db.operation.name"] = operation
            attributes["server.address"] = configuration.url.host
            attributes["server.port"] = configuration.url.port
        }
        return { result in
            if case .failure(let error) = result {
                span.recordError(error)
                span.setStatus(SpanStatus(code: .error))
            }
            span.end()
            replied(result)
        }
    }

    /// The traced request the caller runs in, for a call it hands to a later loop tick; nil
    /// when tracing is off or the caller is in no traced request.
    public func currentTraceParent() -> RedisTraceParent? {
        guard tracer != nil, let context = ServiceContext.current else { return nil }
        return RedisTraceParent(context: context)
    }

    /// Sends `request` and completes the future on `eventLoop` with its reply (several as one
    /// `.array`; error replies included, except a script's, which fail it).
    func execute(_ request: RedisRequest, on eventLoop: any EventLoop) -> EventLoopFuture<RedisValue> {
        Self.future(on: eventLoop) { execute(request, on: eventLoop, answering: $0) }
    }

    /// A future on `eventLoop` completed by what `call` hands its callback: the calls that
    /// return a future, on the one callback path.
    private static func future(on eventLoop: any EventLoop, _ call: (@escaping Replied) -> Void) -> EventLoopFuture<RedisValue> {
        let answered = eventLoop.makePromise(of: RedisValue.self)
        call { answered.completeWith($0) }
        return answered.futureResult
    }

    /// Sends `request` and hands its reply to `answered` on `eventLoop`.
    func execute(_ request: RedisRequest, on eventLoop: any EventLoop, answering answered: @escaping Replied) {
        observer?.started()
        let attempt = Attempt(
            request: request, deadline: .now() + TimeAmount(configuration.timeout), started: observer == nil ? nil : .now
        )
        send(attempt, on: eventLoop, answering: answered)
    }

    /// One call as it goes: what it sends and where, and what of its budget is spent.
    struct Attempt: Sendable {
        var request: RedisRequest
        let deadline: NIODeadline
        let started: ContinuousClock.Instant?
        var retries = 0
        /// Set for one send after `ASK`: that node, preceded by `ASKING`.
        var askingAt: RedisNodePool?
    }

    private func send(_ attempt: Attempt, on eventLoop: any EventLoop, answering answered: @escaping Replied) {
        let known: RedisNodePool?
        var slot: Int?
        switch attempt.request.target {
        case .node(let node):
            known = node
        case .slot(let target):
            known = attempt.askingAt ?? topologyPool.knownPrimary(forSlot: target)
            slot = target
        }
        if let known {
            if let connection = known.readyConnection(on: eventLoop) {
                write(attempt, on: connection, of: known, on: eventLoop, answering: answered)
            } else {
                connect(attempt, to: known, on: eventLoop, answering: answered)
            }
            return
        }
        topologyPool.primary(forSlot: slot, on: eventLoop).whenComplete { result in
            switch result {
            case .success(let node): self.connect(attempt, to: node, on: eventLoop, answering: answered)
            case .failure(let error): self.finish(attempt, .failure(error), on: eventLoop, answering: answered)
            }
        }
    }

    /// Waits for a connection to `node` (dialled within the call's budget) and writes there.
    private func connect(_ attempt: Attempt, to node: RedisNodePool, on eventLoop: any EventLoop, answering answered: @escaping Replied) {
        node.connection(on: eventLoop, deadline: attempt.deadline).whenComplete { result in
            switch result {
            case .success(let connection): self.write(attempt, on: connection, of: node, on: eventLoop, answering: answered)
            case .failure(let error): self.received(.failure(error), attempt, from: node, on: eventLoop, answering: answered)
            }
        }
    }

    private func write(
        _ attempt: Attempt, on connection: RedisConnection, of node: RedisNodePool, on eventLoop: any EventLoop,
        answering answered: @escaping Replied
    ) {
        var payload = attempt.request.payload(allocator: connection.channel.allocator)
        var replyCount = attempt.request.replyCount
        if attempt.askingAt != nil {
            var asking = connection.channel.allocator.buffer(capacity: 16 + payload.readableBytes)
            RedisCommand.asking.encode(into: &asking)
            asking.writeBuffer(&payload)
            payload = asking
            replyCount += 1
        }
        connection.send(formatted: payload, replyCount: replyCount, deadline: attempt.deadline) { result in
            // The connection's loop is the caller's in the usual case (a ready connection
            // there); one dialled elsewhere answers through a hop.
            if eventLoop.inEventLoop {
                self.received(result, attempt, from: node, on: eventLoop, answering: answered)
            } else {
                eventLoop.execute { self.received(result, attempt, from: node, on: eventLoop, answering: answered) }
            }
        }
    }

    private func received(
        _ result: Result<RedisValue, any Error>, _ attempt: Attempt, from node: RedisNodePool, on eventLoop: any EventLoop,
        answering answered: @escaping Replied
    ) {
        switch result {
        case .failure(let error):
            topologyPool.lost(node)
            finish(attempt, .failure(error), on: eventLoop, answering: answered)
        case .success(var reply):
            if attempt.askingAt != nil, case .array(let replies) = reply {
                // `ASKING`'s own `OK` is not part of the response.
                reply = replies.count == 2 ? replies[1] : .array(Array(replies.dropFirst()))
            }
            guard let (next, pause) = retry(after: reply, attempt, from: node) else {
                finish(attempt, .success(reply), on: eventLoop, answering: answered)
                return
            }
            guard let pause else {
                send(next, on: eventLoop, answering: answered)
                return
            }
            eventLoop.scheduleTask(in: pause) { self.send(next, on: eventLoop, answering: answered) }
        }
    }

    /// The call to send after `reply`, and the pause before it, or nil when `reply` is the
    /// answer. Redis ran nothing of a refused command, so sending it again is safe: a batch
    /// holds one script (and its `WAIT`), reads, or one transaction, which `EXEC` discards
    /// when a command in it was refused.
    private func retry(after reply: RedisValue, _ attempt: Attempt, from node: RedisNodePool) -> (Attempt, TimeAmount?)? {
        guard attempt.retries < Self.maximumRetries,
              let refusal = Self.refusals(in: reply, count: attempt.request.replyCount).first
        else { return nil }
        var next = attempt
        next.retries += 1
        next.askingAt = nil
        if let script = attempt.request.script, !attempt.request.sendsSource, refusal.hasPrefix("NOSCRIPT") {
            // Redis lost the script (a restart, `SCRIPT FLUSH`); `EVAL` puts it back in its cache.
            logger.debug("redis lost a script, sending its source", metadata: ["script": "\(script.script.name)"])
            next.request.sendsSource = true
            return (next, nil)
        }
        switch topologyPool.reroute(after: refusal, from: node) {
        case nil:
            return nil
        case .again:
            return (next, nil)
        case .asking(let target):
            next.askingAt = target
            return (next, nil)
        case .after(let pause):
            guard NIODeadline.now() + pause < attempt.deadline else { return nil }
            return (next, pause)
        }
    }

    /// The error messages among a request's replies, in order.
    private static func refusals(in reply: RedisValue, count: Int) -> [String] {
        if count == 1 {
            if case .error(let message) = reply { return [message] }
            return []
        }
        return reply.array?.compactMap { if case .error(let message) = $0 { message } else { nil } } ?? []
    }

    /// Completes the call: a script's reply is checked (an error reply, too few replicas
    /// confirming it) and the observer hears how it ended.
    private func finish(
        _ attempt: Attempt, _ result: Result<RedisValue, any Error>, on eventLoop: any EventLoop, answering answered: @escaping Replied
    ) {
        var result = result
        let request = attempt.request
        if request.script != nil || request.confirmations > 0, case .success(let reply) = result {
            result = Result { try Self.confirmedResponse(reply, of: request.script?.script.name ?? request.name, confirmations: request.confirmations) }
        }
        if let observer, let started = attempt.started {
            let elapsed = ContinuousClock.now - started
            let failure: RedisError?
            switch result {
            case .failure(let error): failure = error as? RedisError ?? .connection("\(error)")
            case .success(.error(let message)) where attempt.request.replyCount == 1: failure = .server(message)
            case .success: failure = nil
            }
            observer.finished(attempt.request.name, elapsed, failure)
            if let call = attempt.request.script { observer.scriptFinished(call.script.name, elapsed, failure != nil) }
        }
        // A connection still being dialled may fail on the loop that dials it.
        if eventLoop.inEventLoop {
            answered(result)
        } else {
            eventLoop.execute { [result] in answered(result) }
        }
    }

    /// A script's (or a confirmed command's) value from its reply, or from its reply and
    /// `WAIT`'s: fewer confirmations than asked for is a ``RedisError/timeout(_:)`` (the
    /// caller's 503). The write did happen on the primary then: what is lost is only the
    /// promise that a failover keeps it.
    private static func confirmedResponse(_ reply: RedisValue, of name: String, confirmations: Int) throws -> RedisValue {
        guard confirmations > 0 else { return try reply.throwingServerError() }
        guard let replies = reply.array, replies.count == 2 else {
            throw RedisError.protocolViolation("\(name) and WAIT returned \(reply)")
        }
        let value = try replies[0].throwingServerError()
        let confirmed = try replies[1].throwingServerError().int ?? 0
        guard confirmed >= confirmations else {
            throw RedisError.timeout("\(confirmed) of \(confirmations) replicas confirmed \(name) in time")
        }
        return value
    }
}
