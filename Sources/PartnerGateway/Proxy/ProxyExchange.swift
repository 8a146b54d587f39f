import HTTPTypes
import Logging
import NIOCore
import NIOHTTP1

/// One proxied request, driven on its client connection's event loop from its head to the
/// end of its answer: admission (from memory, or one asynchronous step), an upstream
/// connection from the pool, the request body streamed up with back-pressure and held to
/// `max_body_bytes`, the response streamed back with back-pressure, and every failure turned
/// into its answer here, in one place.
///
/// Failures before the response head are answered in the error shape: `502
/// UPSTREAM_UNAVAILABLE` (refused, reset, malformed), `504 UPSTREAM_TIMEOUT`, `413
/// PAYLOAD_TOO_LARGE`, `400 INVALID_REQUEST` for a broken request body, and admission's
/// refusals. After the head, the client's connection (over HTTP/2, its stream) is closed, so a
/// broken body can never pass for a complete one. What differs between HTTP/1.1 and HTTP/2 is
/// behind ``ProxyClient``.
final class ProxyExchange: UpstreamResponseSink {
    private enum Phase {
        /// Waiting for admission; body parts are held.
        case admitting
        /// Waiting for an upstream connection; body parts are held.
        case connecting
        /// The request is with the upstream.
        case forwarding
        /// Answered (or the client went away); late body parts are dropped.
        case done
    }

    let request: ProxyEngine.Request
    private let engine: ProxyEngine
    /// Where the answer goes (an HTTP/1.1 connection or an HTTP/2 stream). Held strongly: the
    /// client drops the exchange once it is over, which ends the cycle.
    private let client: any ProxyClient
    /// The client connection's event loop, on which everything of the exchange happens.
    private let eventLoop: any EventLoop
    private let started = ContinuousClock.now
    private var phase = Phase.admitting
    private var admitted: ProxyEngine.Admitted?
    private var connection: UpstreamConnection?
    /// The exchange's place in its pool's queue while it waits for a connection.
    private var waitingTicket: Int?
    /// The connection came from the pool (it may have gone stale there).
    private var reused = false
    /// The request has been sent once more after a reused connection closed: never again.
    private var retried = false
    /// Body parts that arrived before the upstream connection was ready.
    private var heldBody: [HTTPServerRequestPart] = []
    private var bodyBytes = 0
    /// The status sent to the client, once the response head has been written.
    private var status: Int?
    /// From the start to the upstream's response head; response body bytes sent on.
    private var upstreamDuration: Duration?
    private var bytesOut = 0
    /// The code of a refusal answered before admission (the access log's `auth`).
    private var refusal: String?
    private var awaitingClientWritability = false
    private var awaitingUpstreamWritability = false
    /// The answer's end is being written. On HTTP/2 that write can close the client's stream at
    /// once (both sides ended), and the close must not count as the client going away: the
    /// answer is complete and is recorded as such.
    private var answerEnding = false
    /// The exchange's spans; nil when tracing is off.
    private let trace: ExchangeTrace?

    init(request: ProxyEngine.Request, engine: ProxyEngine, client: any ProxyClient, eventLoop: any EventLoop) {
        self.request = request
        self.engine = engine
        self.client = client
        self.eventLoop = eventLoop
        trace = engine.tracing.map { ExchangeTrace(request, tracing: $0) }
        engine.started()
    }

    // MARK: Admission and the upstream connection

    func start(memo: inout ProxyEngine.ConnectionMemo) {
        let admission: ProxyEngine.Admission
        if let trace {
            admission = trace.asCurrent { engine.admit(request, memo: &memo, on: eventLoop) }
        } else {
            admission = engine.admit(request, memo: &memo, on: eventLoop)
        }
        switch admission {
        case .admitted(let admitted):
            proceed(admitted)
        case .pending(let future):
            if request.hasBody { client.pauseRequestBody() }
            future.assumeIsolated().whenComplete { result in
                guard case .admitting = self.phase else { return }
                switch result {
                case .success(let admitted):
                    self.proceed(admitted)
                case .failure(let error):
                    let refusal = error as? GatewayError ?? .internalError
                    self.refusal = refusal.code
                    self.answer(refusal)
                }
            }
        }
    }

    private func proceed(_ admitted: ProxyEngine.Admitted) {
        self.admitted = admitted
        if case .length(let length) = request.body, length > engine.maxBodyBytes {
            bodyTooLarge()
            return
        }
        phase = .connecting
        acquireConnection()
    }

    /// An idle connection at once, or the pool's next one (``UpstreamPool/acquire(on:timeout:)``).
    private func acquireConnection() {
        let route = request.route
        switch route.pool.acquire(on: eventLoop, timeout: min(TimeAmount(route.timeout), .seconds(2))) {
        case .idle(let idle):
            reused = true
            send(on: idle)
        case .waiting(let ticket, let handed):
            waitingTicket = ticket
            if request.hasBody { client.pauseRequestBody() }
            handed.assumeIsolated().whenComplete { result in
                self.waitingTicket = nil
                switch result {
                case .success(let handed):
                    guard case .connecting = self.phase else {
                        // Never used for this exchange: back to the pool for the next one.
                        route.pool.releaseOnLoop(handed.connection)
                        return
                    }
                    self.reused = handed.reused
                    self.send(on: handed.connection)
                case .failure:
                    self.upstreamFailed(.refused)
                }
            }
        }
    }

    /// Out of the pool's queue, if waiting there: the exchange is over.
    private func leaveQueue() {
        guard let ticket = waitingTicket else { return }
        waitingTicket = nil
        request.route.pool.leave(ticket, on: eventLoop)
    }

    private func send(on connection: UpstreamConnection) {
        guard let admitted else { return }
        self.connection = connection
        phase = .forwarding
        let upstream = connection.handlerOnLoop
        let head = engine.upstreamHead(
            for: request,
            identity: admitted.identity,
            trace: trace?.upstreamStarting(route: request.route),
            allocator: connection.channel.allocator
        )
        do {
            try upstream.send(head, to: self, timeout: TimeAmount(request.route.timeout))
        } catch {
            upstreamFailed(error)
            return
        }
        let held = heldBody
        heldBody = []
        for part in held where phase == .forwarding {
            forward(part)
        }
        // Inside a read from the client, the body that came with the head is still to be
        // delivered: the flush at the read's end sends head and body in one write. Otherwise
        // (admission or the connection took a step) the head and what was held go now.
        if request.hasBody, !client.readUnderWay { upstream.flush() }
        if phase == .forwarding && !awaitingUpstreamWritability { client.resumeRequestBody() }
    }

    // MARK: The request body

    /// A body part (or the end) of this exchange's request, as the client sends it.
    func requestPart(_ part: HTTPServerRequestPart) {
        switch phase {
        case .admitting, .connecting:
            heldBody.append(part)
        case .forwarding:
            forward(part)
        case .done:
            break
        }
    }

    private func forward(_ part: HTTPServerRequestPart) {
        guard let upstream = connection?.handlerOnLoop else { return }
        switch part {
        case .head:
            break
        case .body(let chunk):
            bodyBytes += chunk.readableBytes
            guard bodyBytes <= engine.maxBodyBytes else {
                bodyTooLarge()
                return
            }
            upstream.sendBody(chunk)
            if !upstream.isWritable {
                upstream.flush()
                awaitingUpstreamWritability = !upstream.isWritable
                if awaitingUpstreamWritability { client.pauseRequestBody() }
            }
        case .end:
            // A request without a body was ended upstream with its head (``send(on:)``):
            // ending it again cost a write and a flush through the pipeline per request.
            if request.hasBody { upstream.sendEnd() }
        }
    }

    /// The client's read has been handed over: what it brought (the head, when the exchange
    /// started in it, and the body) goes up in one write.
    func clientReadComplete() {
        guard phase == .forwarding, request.hasBody else { return }
        connection?.handlerOnLoop.flush()
    }

    func upstreamWritabilityChanged() {
        guard awaitingUpstreamWritability, connection?.handlerOnLoop.isWritable == true else { return }
        awaitingUpstreamWritability = false
        client.resumeRequestBody()
    }

    private func bodyTooLarge() {
        request.route.metrics.failed("body_too_large")
        connection?.abort(.closed)
        if status == nil {
            answer(.payloadTooLarge)
        } else {
            abandon()
        }
    }

    /// The client's request could not be decoded (a broken chunk, a body cut short): it
    /// cannot go on, nor can the connection.
    func clientFailed(_ error: any Error) {
        guard phase != .done else { return }
        request.route.metrics.failed("broken_request_body")
        connection?.abort(.closed)
        if status == nil {
            answer(.invalidRequest("the request body is malformed or incomplete"), closeAfter: true)
        } else {
            abandon()
        }
    }

    /// The client went away: the upstream connection (mid-exchange) cannot be reused.
    func clientClosed() {
        guard phase != .done, !answerEnding else { return }
        phase = .done
        leaveQueue()
        connection?.abort(.closed)
        trace?.finished(status: nil)
        engine.abandoned()
    }

    // MARK: The response

    func upstreamPart(_ part: HTTPClientResponsePart) -> Bool {
        guard phase == .forwarding else { return false }
        switch part {
        case .head(let head):
            guard status == nil else {
                upstreamFailed(.malformedResponse)
                return false
            }
            let code = Int(head.status.code)
            status = code
            let upstreamDuration = ContinuousClock.now - started
            self.upstreamDuration = upstreamDuration
            request.route.metrics.answered(status: code, after: upstreamDuration)
            trace?.upstreamResponded(status: code)
            client.writeAnswerHead(ProxyAnswerHead(
                status: head.status,
                fields: .upstream(head.headers, requestID: request.requestID, adding: admitted?.limitHeaders ?? [:])
            ))
            return true
        case .body(let chunk):
            guard status != nil else {
                upstreamFailed(.malformedResponse)
                return false
            }
            bytesOut += chunk.readableBytes
            client.writeAnswerBody(chunk)
            if client.answerWritable { return true }
            // Wait for the client to take what is buffered. The flush can make the client
            // writable again at once (writability then changes inside it), so look again after.
            awaitingClientWritability = true
            client.flushAnswer()
            if client.answerWritable {
                awaitingClientWritability = false
                return true
            }
            return false
        case .end(let trailers):
            guard let status, let connection else {
                upstreamFailed(.malformedResponse)
                return false
            }
            // Back to the pool first: the write below may close an HTTP/2 stream at once.
            request.route.pool.releaseOnLoop(connection)
            self.connection = nil
            answerEnding = true
            trace?.upstreamEnded()
            client.endAnswer(trailers: trailers, closingAfter: false)
            finish(status: status)
            return true
        }
    }

    /// Flushes once per read from the upstream, not per part: a small response's head, body
    /// and end usually arrive in one read, and the end's flush then sends them together.
    func upstreamReadComplete() {
        client.flushAnswer()
    }

    func clientWritabilityChanged() {
        guard awaitingClientWritability, client.answerWritable else { return }
        awaitingClientWritability = false
        connection?.handlerOnLoop.resume()
    }

    func upstreamFailed(_ error: UpstreamError) {
        guard phase != .done else { return }
        connection?.abort(error)
        // A reused connection that closed before any answer may have been closed by the
        // upstream just as it was taken; a request without a body and with an idempotent
        // method is sent once more, on the pool's next connection. Nothing else is ever retried.
        if error == .closed, reused, !retried, status == nil, !request.hasBody, request.head.method.isSafeToRetry {
            retried = true
            reused = false
            connection = nil
            phase = .connecting
            acquireConnection()
            return
        }
        request.route.metrics.failed(error.description)
        trace?.upstreamFailed(error.description)
        var metadata: Logger.Metadata = [
            "route": .string(request.route.name), "kind": .string(error.description), "request_id": .string(request.requestID),
        ]
        trace?.annotate(&metadata)
        if status != nil {
            engine.logger.warning("upstream failed mid-body; closing the client connection", metadata: metadata)
            abandon()
            return
        }
        if error != .timeout {
            engine.logger.warning("upstream unavailable", metadata: metadata)
        }
        answer(error == .timeout ? .upstreamTimeout : .upstreamUnavailable)
    }

    // MARK: Ending

    /// Answers the client in the error shape (with the rate-limit fields of a refusal).
    private func answer(_ error: GatewayError, closeAfter: Bool = false) {
        guard phase != .done, status == nil else { return }
        var (head, body) = error.channelParts(requestID: request.requestID)
        if closeAfter { head.headers.replaceOrAdd(name: "Connection", value: "close") }
        client.writeAnswerHead(ProxyAnswerHead(status: head.status, fields: .gateway(head.headers)))
        client.writeAnswerBody(body)
        bytesOut = body.readableBytes
        answerEnding = true
        client.endAnswer(trailers: nil, closingAfter: closeAfter)
        finish(status: error.status.code)
    }

    /// Closes the client's connection mid-response: the client sees a broken transfer.
    private func abandon() {
        let status = status ?? 0
        client.abortAnswer()
        finish(status: status)
    }

    private func finish(status: Int) {
        guard phase != .done else { return }
        phase = .done
        leaveQueue()
        heldBody = []
        trace?.finished(status: status)
        engine.finished(request, ProxyEngine.Outcome(
            status: status, started: started, identity: admitted?.identity, refusal: refusal,
            upstreamDuration: upstreamDuration, bytesIn: bodyBytes, bytesOut: bytesOut, traceID: trace?.traceID
        ))
        client.exchangeAnswered()
    }
}

extension HTTPMethod {
    /// Methods RFC 9110 calls idempotent: safe to send twice when they carry no body.
    var isSafeToRetry: Bool {
        switch self {
        case .GET, .HEAD, .OPTIONS, .DELETE, .PUT, .TRACE: true
        default: false
        }
    }
}
