import GatewayAdmission
import GatewayConfiguration
import GatewayEdge
import GatewayObservability
import GatewayPrimitives
import HTTPTypes
import Logging
import NIOCore
import NIOHTTP1

/// One proxied request, driven on its client connection's event loop from its head to the
/// end of its response: admission (from memory, or one asynchronous step), an upstream
/// connection from the pool, the request body streamed up, the response streamed back.
///
/// What happens next is decided by its ``StateMachine`` (the body limit, back-pressure both
/// ways, the retry rule, the response to every failure); this class performs the actions: the
/// pool, the upstream connection, the client (``ProxyDownstream``: an HTTP/1.1 connection or an
/// HTTP/2 stream), metrics, logs and spans.
package final class ProxyExchange: UpstreamResponseSink {
    package let request: ProxyEngine.Request
    private let engine: ProxyEngine
    /// Where the response goes. Held strongly: the client drops the exchange once it is over,
    /// which ends the cycle. A ``DetachedDownstream`` once a keyed request's client has gone.
    private var client: any ProxyDownstream
    /// The client connection's event loop, on which everything of the exchange happens.
    private let eventLoop: any EventLoop
    private let started = ContinuousClock.now
    private var machine: StateMachine
    private var admitted: Admitted?
    /// The upstream connection while the request is with it.
    private var connection: UpstreamConnection?
    /// The exchange's place in its pool's queue while it waits for a connection.
    private var waitingTicket: Int?
    /// The target of the current try (``UpstreamFleet``): its connection's pool, and whom the
    /// machine's reports of the try are about.
    private var target: UpstreamTarget?
    /// From the start to the upstream's response head; response body bytes sent on.
    private var upstreamDuration: Duration?
    private var bytesOut = 0
    /// The code of a refusal answered before admission (the access log's `auth`).
    private var refusal: String?
    /// The exchange's spans; nil when tracing is off.
    private let trace: ExchangeTrace?
    /// A keyed request's lock and recorded response (`Idempotency-Key`).
    private var idempotent: IdempotentRequest?
    /// A WebSocket handshake's place among its caller's connections (``UpgradedConnections``),
    /// held from admission until the connection closes or the handshake fails.
    private var upgradeHolder: String?
    /// A WebSocket handshake's credential, taken at admission and registered with the socket.
    private var upgradeCredential: UpgradedCredential?
    /// The response is an event stream (`text/event-stream`): where its events end.
    private var eventStream: EventStreamEnd?
    /// The listener drains: an event stream ends at its next event's end.
    private var draining = false

    package init(request: ProxyEngine.Request, engine: ProxyEngine, client: any ProxyDownstream, eventLoop: any EventLoop) {
        self.request = request
        self.engine = engine
        self.client = client
        self.eventLoop = eventLoop
        let fleet = request.route.fleet
        machine = StateMachine(
            method: request.head.method, hasBody: request.hasBody, maxBodyBytes: engine.maxBodyBytes,
            retries: .init(attempts: fleet.attempts, otherTargets: !fleet.isSingle),
            upgrade: request.handshake == .websocket
        )
        trace = engine.tracing.map { ExchangeTrace(request, tracing: $0) }
        engine.started()
    }

    // MARK: Admission and the upstream connection

    package func start(memo: inout ProxyEngine.ConnectionMemo) {
        if case .refused(let refusal) = request.handshake {
            perform(machine.admissionRefused(refusal))
            return
        }
        if let preflight = engine.preflightFields(for: request), machine.preflightAnswered() {
            answerPreflight(preflight)
            return
        }
        let admission: Admission
        if let trace {
            admission = trace.asCurrent { engine.admit(request, memo: &memo, on: eventLoop) }
        } else {
            admission = engine.admit(request, memo: &memo, on: eventLoop)
        }
        switch admission {
        case .admitted(let admitted):
            self.admitted(admitted)
        case .pending(let future):
            perform(machine.admissionPending())
            future.assumeIsolated().whenComplete { result in
                switch result {
                case .success(let admitted):
                    self.admitted(admitted)
                case .failure(let error):
                    let refusal = error as? GatewayError ?? .internalError
                    let action = self.machine.admissionRefused(refusal)
                    if case .fail = action { self.refusal = refusal.code }
                    self.perform(action)
                }
            }
        }
    }

    private func admitted(_ admitted: Admitted) {
        if request.handshake == .websocket {
            guard let credential = UpgradedCredential.of(request, engine: engine) else {
                perform(machine.admissionRefused(request.route.auth == .bearer ? BearerAuthenticator.invalid : APIKeyAuthenticator.invalid))
                return
            }
            upgradeCredential = credential
            if let holder = UpgradedConnections.holder(of: admitted.identity, presentedKey: request.head.first(HeaderName.apiKey.lowercaseBytes)) {
                guard engine.upgraded.reserve(holder) else {
                    perform(machine.admissionRefused(UpgradedConnections.tooMany))
                    return
                }
                upgradeHolder = holder
            }
        }
        self.admitted = admitted
        if let keyID = admitted.identity.keyID { trace?.admitted(keyID: keyID) }
        if request.route.idempotency != nil, !isDeclaredTooLarge {
            switch IdempotentRequest.start(request, identity: admitted.identity, engine: engine, on: eventLoop, decided: {
                self.idempotencyDecided($0)
            }) {
            case .notKeyed:
                break
            case .refused(let error):
                perform(machine.admissionRefused(error))
                return
            case .keyed(let keyed):
                // The body is read whole (held by the machine) for the request's fingerprint,
                // starting with what arrived while admission took its step.
                idempotent = keyed
                guard request.hasBody else {
                    keyed.requestEnded()
                    return
                }
                if case .admitting(let held) = machine.state {
                    for part in held where keyed.readsBody { keyed.requestPart(part) }
                }
                if keyed.readsBody { client.resumeRequestBody() }
                return
            }
        }
        forward()
    }

    private var isDeclaredTooLarge: Bool {
        if case .length(let length) = request.body { return length > engine.maxBodyBytes }
        return false
    }

    /// What a keyed request's lock decided.
    private func idempotencyDecided(_ decision: IdempotentRequest.Decision) {
        switch decision {
        case .forward:
            forward()
        case .refuse(let error):
            perform(machine.admissionRefused(error))
        case .replay(let stored):
            guard machine.answeredFromStore(status: stored.status) else { return }
            var extra = admitted?.limitHeaders ?? [:]
            extra[IdempotentResponse.replayedField] = "true"
            let status = HTTPResponseStatus(statusCode: stored.status)
            client.writeResponseHead(ProxyResponseHead(
                status: status,
                fields: .upstream(UpstreamResponseHead(status: status, fields: Array(stored.replayHeaders)), requestID: request.requestID, adding: extra),
                cors: engine.corsFields(for: request)
            ))
            client.writeResponseBody(ByteBuffer(bytes: stored.body))
            bytesOut = stored.body.count
            client.endResponse(trailers: nil, closingAfter: false)
            finish(status: stored.status)
        }
    }

    private func forward() {
        var declaredLength: Int?
        if case .length(let length) = request.body { declaredLength = length }
        perform(machine.admitted(declaredLength: declaredLength))
    }

    /// A target from the route's fleet, none of `tried` (on a fleet of several, those tried
    /// already); the machine decides what no target left means.
    private func pickTarget(excluding tried: TargetSet) {
        let fleet = request.route.fleet
        let caller = fleet.balance == .hashUser ? admitted?.identity.userID ?? admitted?.identity.partnerID : nil
        guard let target = fleet.pick(caller: caller, excluding: tried) else {
            perform(machine.noTarget())
            return
        }
        guard machine.picked(target: target.index) == .acquireConnection else {
            // The machine was not picking (a bug it has reported): the target goes back untried.
            fleet.finished(target, .neutral)
            return
        }
        acquireConnection(to: target)
    }

    /// An idle connection to `target` at once, or its pool's next one
    /// (``UpstreamPool/acquire(on:timeout:)``).
    private func acquireConnection(to target: UpstreamTarget) {
        let route = request.route
        self.target = target
        route.trying(target)
        // The try's span starts with the connection, so a refused one is a span too; the
        // head sent later carries its context.
        _ = trace?.upstreamStarting(route: route, target: target)
        switch target.pool.acquire(on: eventLoop, timeout: route.connectTimeout) {
        case .idle(let idle):
            connected(idle, reused: true)
        case .waiting(let ticket, let handed):
            waitingTicket = ticket
            perform(machine.waitingForConnection())
            handed.assumeIsolated().whenComplete { result in
                self.waitingTicket = nil
                switch result {
                case .success(let handed):
                    self.connected(handed.connection, reused: handed.reused)
                case .failure:
                    self.upstreamFailed(.refused)
                }
            }
        }
    }

    private func connected(_ connection: UpstreamConnection, reused: Bool) {
        switch machine.connected(reused: reused) {
        case .sendHead(let held):
            send(held: held, on: connection)
        default:
            // Never used for this exchange: back to the pool for the next one.
            (target?.pool ?? request.route.pool).releaseOnLoop(connection)
        }
    }

    private func send(held: [HTTPServerRequestPart], on connection: UpstreamConnection) {
        guard let admitted else { return }
        self.connection = connection
        let upstream = connection.handlerOnLoop
        let head = engine.upstreamHead(
            for: request,
            identity: admitted.identity,
            trace: trace?.upstreamStarting(route: request.route, target: target),
            allocator: connection.channel.allocator,
            target: target
        )
        do {
            try upstream.send(
                head, to: self, timeout: TimeAmount(request.route.timeout), streamIdleTimeout: TimeAmount(request.route.streamIdleTimeout)
            )
        } catch {
            upstreamFailed(error)
            return
        }
        for part in held where machine.isForwarding {
            perform(machine.requestPart(part))
        }
        guard machine.isForwarding else { return }
        // Inside a read from the client, the body that came with the head is still to be
        // delivered: the flush at the read's end sends head and body in one write. Otherwise
        // (admission or the connection took a step) the head and what was held go now.
        if request.hasBody, !client.readUnderWay { upstream.flush() }
        perform(machine.headSent())
    }

    /// Out of the pool's queue, if waiting there: the exchange is over.
    private func leaveQueue() {
        guard let ticket = waitingTicket else { return }
        waitingTicket = nil
        (target?.pool ?? request.route.pool).leave(ticket, on: eventLoop)
    }

    /// Tells the fleet how the current try went (passive health, in-flight counts), when the
    /// machine says so.
    private func report(_ outcome: UpstreamFleet.Outcome?) {
        guard let outcome, let target else { return }
        if request.route.fleet.finished(target, outcome) {
            request.route.metrics.ejected(target: target.url)
            engine.logger.warning(
                "upstream target ejected after consecutive failures",
                metadata: ["route": .string(request.route.name), "target": .string(target.url)]
            )
        }
    }

    /// The retry the machine decided, if the route's budget allows one and a target is left.
    private func retry(excluding tried: TargetSet) {
        guard request.route.fleet.retryAllowed() else {
            request.route.metrics.retryRefused()
            perform(machine.retryRefused())
            return
        }
        request.route.metrics.retried()
        pickTarget(excluding: tried)
    }

    // MARK: The request body

    /// A body part (or the end) of this exchange's request, as the client sends it.
    package func requestPart(_ part: HTTPServerRequestPart) {
        perform(machine.requestPart(part))
        if let idempotent, idempotent.readsBody { idempotent.requestPart(part) }
    }

    /// The client's read has been handed over: what it brought (the head, when the exchange
    /// started in it, and the body) goes up in one write.
    package func clientReadComplete() {
        guard request.hasBody, machine.isForwarding else { return }
        connection?.handlerOnLoop.flush()
    }

    package func upstreamWritabilityChanged() {
        guard connection?.handlerOnLoop.isWritable == true else { return }
        perform(machine.upstreamWritable())
    }

    /// The client's request could not be decoded (a broken chunk, a body cut short): it
    /// cannot go on, nor can the connection.
    package func clientFailed(_ error: any Error) {
        perform(machine.clientFailed())
    }

    /// The client went away.
    package func clientClosed() {
        // A keyed request the upstream has runs on without its client: its answer is stored,
        // and the client's retry is replayed it instead of reaching the upstream again.
        if idempotent != nil, machine.isForwarding, !(client is DetachedDownstream) {
            client = DetachedDownstream()
            clientWritabilityChanged()
            return
        }
        perform(machine.clientClosed())
    }

    // MARK: The response

    package func upstreamPart(_ part: UpstreamResponsePart) -> Bool {
        switch part {
        case .head(let head):
            let code = Int(head.status.code)
            guard let action = machine.upstreamHead(status: code) else { return false }
            if case .upgrade = action {
                upgrade(head)
                return false
            }
            guard case .writeResponseHead = action else {
                upstreamFailed(.malformedResponse, decided: action)
                return false
            }
            report(.answered(status: code))
            let upstreamDuration = ContinuousClock.now - started
            self.upstreamDuration = upstreamDuration
            request.route.metrics.answered(status: code, after: upstreamDuration)
            trace?.upstreamResponded(status: code)
            // A keyed request's stored response keeps the fields as strings: made only for it.
            if let idempotent { idempotent.responseHead(status: code, headers: head.headers) }
            client.writeResponseHead(ProxyResponseHead(
                status: head.status,
                fields: .upstream(head, requestID: request.requestID, adding: admitted?.limitHeaders ?? [:]),
                cors: engine.corsFields(for: request)
            ))
            if EventStreamEnd.isEventStream(head) { eventStream = EventStreamEnd() }
            return !endEventStreamIfDraining()
        case .body(let chunk):
            guard let action = machine.upstreamBody(chunk) else { return false }
            guard case .writeResponseBody = action else {
                upstreamFailed(.malformedResponse, decided: action)
                return false
            }
            bytesOut += chunk.readableBytes
            idempotent?.responseBody(chunk)
            client.writeResponseBody(chunk)
            eventStream?.passed(chunk)
            if endEventStreamIfDraining() { return false }
            if client.responseWritable { return true }
            // Wait for the client to take what is buffered. The flush can make the client
            // writable again at once (writability then changes inside it), so look again after.
            machine.clientNotWritable()
            client.flushResponse()
            if client.responseWritable {
                _ = machine.clientWritable()
                return true
            }
            return false
        case .end(let trailers):
            guard let action = machine.upstreamEnd() else { return false }
            guard case .endResponse = action, let connection, let status = machine.status else {
                upstreamFailed(.malformedResponse, decided: action)
                return false
            }
            // Back to the pool first: the write below may close an HTTP/2 stream at once.
            (target?.pool ?? request.route.pool).releaseOnLoop(connection)
            self.connection = nil
            trace?.upstreamEnded()
            idempotent?.responseEnded()
            client.endResponse(trailers: trailers, closingAfter: false)
            machine.responseEnded()
            finish(status: status)
            return true
        }
    }

    /// The listener drains (``ProxiedRequestExchange/drain()``).
    package func drain() {
        draining = true
        _ = endEventStreamIfDraining()
    }

    /// Ends an event stream while the listener drains, once what went to the client ends an
    /// event: the client sees a whole response and its `EventSource` reconnects (to a gateway
    /// that is not draining); the upstream connection, mid-stream, is closed. True if it ended.
    private func endEventStreamIfDraining() -> Bool {
        guard draining, let eventStream, eventStream.atEventEnd, let status = machine.status, machine.streamEndsEarly() else { return false }
        abortConnection(.closed)
        trace?.upstreamEnded()
        client.endResponse(trailers: nil, closingAfter: false)
        machine.responseEnded()
        finish(status: status)
        return true
    }

    /// The upstream accepted the handshake: the `101` goes to the client with the upgrade's
    /// fields (hop-by-hop, so set again here), then the two connections are joined. The
    /// exchange's record is written now: the access line shows the handshake.
    private func upgrade(_ head: UpstreamResponseHead) {
        guard let connection else { return }
        self.connection = nil
        report(.answered(status: 101))
        let upstreamDuration = ContinuousClock.now - started
        self.upstreamDuration = upstreamDuration
        request.route.metrics.answered(status: 101, after: upstreamDuration)
        trace?.upstreamResponded(status: 101)
        trace?.upstreamEnded()
        connection.handlerOnLoop.detach()
        var fields = admitted?.limitHeaders ?? [:]
        fields.append(HTTPField(name: .connection, value: "Upgrade"))
        fields.append(HTTPField(name: HTTPField.Name("Upgrade")!, value: "websocket"))
        client.writeResponseHead(ProxyResponseHead(
            status: head.status, fields: .upstream(head, requestID: request.requestID, adding: fields)
        ))
        client.flushResponse()
        if let tunnel = client.upgrade(to: connection, idleTimeout: TimeAmount(request.route.streamIdleTimeout)) {
            if let credential = upgradeCredential {
                engine.upgraded.register(tunnel, credential: credential, holder: upgradeHolder, metrics: request.route.websocketMetrics)
                upgradeHolder = nil
            } else {
                // Admission takes a credential for every handshake; a socket without one stays shut.
                assertionFailure("an upgrade without an admitted credential")
                tunnel.close(code: WebSocketTunnel.CloseCode.policyViolation, reason: "revoked")
            }
        }
        finish(status: 101)
    }

    /// Flushes once per read from the upstream, not per part: a small response's head, body
    /// and end usually arrive in one read, and the end's flush then sends them together.
    package func upstreamReadComplete() {
        client.flushResponse()
    }

    package func clientWritabilityChanged() {
        guard machine.awaitingClient, client.responseWritable else { return }
        perform(machine.clientWritable())
    }

    package func upstreamFailed(_ error: UpstreamError) {
        upstreamFailed(error, decided: machine.upstreamFailed(error))
    }

    /// Performs what the machine `decided` for the upstream's `error`, with its logs and span.
    private func upstreamFailed(_ error: UpstreamError, decided action: StateMachine.Action) {
        var metadata: Logger.Metadata {
            var metadata: Logger.Metadata = [
                "route": .string(request.route.name), "kind": .string(error.description), "request_id": .string(request.requestID),
            ]
            trace?.annotate(&metadata)
            return metadata
        }
        switch action {
        case .retry:
            trace?.upstreamFailed(error.description)
        case .fail:
            trace?.upstreamFailed(error.description)
            if error != .timeout { engine.logger.warning("upstream unavailable", metadata: metadata) }
        case .abandon:
            trace?.upstreamFailed(error.description)
            engine.logger.warning("upstream failed mid-body; closing the client connection", metadata: metadata)
        default:
            break
        }
        perform(action, aborting: error)
    }

    // MARK: Actions

    /// Does what the machine decided. `aborting` is what an upstream connection is aborted
    /// with, when the action aborts it.
    private func perform(_ action: StateMachine.Action, aborting reason: UpstreamError = .closed) {
        switch action {
        case .none:
            break
        case .pauseRequestBody:
            client.pauseRequestBody()
        case .resumeRequestBody:
            client.resumeRequestBody()
        case .pickTarget:
            request.route.fleet.requestStarted()
            pickTarget(excluding: TargetSet())
        case .sendBody(let chunk):
            guard let upstream = connection?.handlerOnLoop else { return }
            upstream.sendBody(chunk)
            if !upstream.isWritable {
                upstream.flush()
                if !upstream.isWritable { perform(machine.upstreamNotWritable()) }
            }
        case .sendEnd:
            connection?.handlerOnLoop.sendEnd()
        case .resumeUpstream:
            connection?.handlerOnLoop.resume()
        case .fail(let error, let closeAfter, let failure, let outcome):
            if let failure { request.route.metrics.failed(failure) }
            report(outcome)
            abortConnection(reason)
            answer(error, closeAfter: closeAfter)
        case .abandon(let failure):
            request.route.metrics.failed(failure)
            abortConnection(reason)
            client.abortResponse()
            finish(status: machine.status ?? 0)
        case .retry(let excluding, let outcome):
            report(outcome)
            abortConnection(reason)
            retry(excluding: excluding)
        case .clientGone(let outcome):
            releaseUpgrade()
            leaveQueue()
            abortConnection(.closed)
            report(outcome)
            trace?.finished(status: nil)
            idempotent?.finished()
            // Logged and counted as nginx does, `499`: a caller who hangs up is still billed.
            if admitted == nil && request.route.auth != .none { refusal = "CLIENT_CLOSED" }
            record(status: ProxyEngine.clientClosedStatus, clientGone: true)
        case .acquireConnection, .releaseUnusedConnection, .sendHead, .writeResponseHead, .writeResponseBody, .endResponse, .upgrade:
            // Performed where the input came in, with what only it holds (the target, the
            // connection, the head, the trailers).
            assertionFailure("\(action) reached perform(_:)")
        }
    }

    private func abortConnection(_ reason: UpstreamError) {
        connection?.abort(reason)
        connection = nil
    }

    /// Answers the client in the error shape (with the rate-limit fields of a refusal).
    private func answer(_ error: GatewayError, closeAfter: Bool) {
        var (head, body) = error.channelParts(requestID: request.requestID)
        if closeAfter { head.headers.replaceOrAdd(name: "Connection", value: "close") }
        client.writeResponseHead(ProxyResponseHead(status: head.status, fields: .gateway(head.headers), cors: engine.corsFields(for: request)))
        client.writeResponseBody(body)
        bytesOut = body.readableBytes
        client.endResponse(trailers: nil, closingAfter: closeAfter)
        finish(status: error.status.code)
    }

    /// Answers a CORS preflight: `204` with the policy's fields, nothing from an upstream.
    private func answerPreflight(_ fields: [(name: String, value: String)]) {
        let headers = HTTPHeaders([(HeaderName.requestID.name, request.requestID)])
        client.writeResponseHead(ProxyResponseHead(status: .noContent, fields: .gateway(headers), cors: fields))
        client.endResponse(trailers: nil, closingAfter: false)
        finish(status: 204)
    }

    /// The exchange's one record, once its response ended or was cut.
    private func finish(status: Int) {
        idempotent?.finished()
        releaseUpgrade()
        if request.handshake != .none, status != 101 { request.route.websocketMetrics.refused(status: status) }
        leaveQueue()
        trace?.finished(status: status)
        record(status: status)
        client.exchangeAnswered()
    }

    /// The exchange's access line, metrics and usage (``ProxyEngine/finished(_:_:)``).
    private func record(status: Int, clientGone: Bool = false) {
        engine.finished(request, ProxyEngine.Outcome(
            status: status, started: started, identity: admitted?.identity, refusal: refusal,
            upstreamDuration: upstreamDuration, bytesIn: machine.bodyBytes, bytesOut: bytesOut, traceID: trace?.traceID,
            tries: machine.tries, target: upstreamDuration == nil ? nil : target?.url, clientGone: clientGone
        ))
    }
}

extension ProxyExchange {
    /// A handshake that did not become a connection gives its place back.
    private func releaseUpgrade() {
        guard let holder = upgradeHolder else { return }
        upgradeHolder = nil
        engine.upgraded.release(holder)
    }
}

extension HTTPMethod {
    /// Methods RFC 9110 calls idempotent: safe to send twice when they carry no body.
    package var isSafeToRetry: Bool {
        switch self {
        case .GET, .HEAD, .OPTIONS, .DELETE, .PUT, .TRACE: true
        default: false
        }
    }
}
