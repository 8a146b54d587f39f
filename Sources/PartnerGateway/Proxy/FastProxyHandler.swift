import HTTPTypes
import Logging
import NIOCore
import NIOHTTP1

/// Proxies the requests ``FastProxy`` accepts entirely on the client connection's event loop,
/// handing everything else to Hummingbird untouched.
///
/// Why: a request through Hummingbird's async handler costs several task switches, an
/// HTTPTypes conversion each way and allocations before any forwarding starts; measured, that
/// machinery cost more CPU than the proxying (docs/DECISIONS.md, "Event-loop fast path").
/// Here a cached bearer request goes from the decoded head to a pooled upstream connection on
/// the same loop and back with plain calls: the way nginx and Envoy forward. It sits right
/// after the HTTP/1 decoder and ``ClientProtectionHandler`` (``GatewayHTTP1Channel``), in
/// NIO's own HTTP/1 types, so the upstream's response head goes back to the client as the
/// upstream sent it, minus the hop-by-hop fields.
///
/// Responses leave a keep-alive connection in request order: a request is proxied here only
/// while Hummingbird has no response outstanding, and whatever arrives while one is proxied
/// here waits until its response has ended (past ``maxWaiting`` parts the connection is not
/// read meanwhile, so a pipelining client cannot make the wait list grow without bound).
final class FastProxyHandler: ChannelDuplexHandler, RemovableChannelHandler, UpstreamResponseSink {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart
    typealias OutboundIn = HTTPServerResponsePart
    typealias OutboundOut = HTTPServerResponsePart

    private let proxy: FastProxy
    private var context: ChannelHandlerContext?
    /// Made at the first request: the connection's peer is known by then.
    private var memo: FastProxy.ConnectionMemo?
    /// Heads passed to Hummingbird whose response has not ended yet.
    private var hummingbirdResponsesOutstanding = 0
    private var exchange: Exchange?
    /// What arrived while a request was proxied here, replayed after it.
    private var waiting = CircularBuffer<Waiting>()
    /// An exchange ended before its request's `.end` arrived: that part is this handler's.
    private var swallowNextEnd = false
    /// Hummingbird asked for a read while a request was proxied here.
    private var readHeld = false
    /// Whether anything went on to Hummingbird since the last read completed: when nothing
    /// did, the read-complete event stops here instead of waking Hummingbird's reader.
    private var passedOnSinceReadComplete = false

    private enum Waiting {
        case part(HTTPServerRequestPart)
        case error(any Error)
    }

    /// The request being proxied here. A class: the handler reads it at every step, and
    /// copying the plan (route, upstream head) each time showed in profiles.
    private final class Exchange {
        let plan: FastProxy.Plan
        let started: ContinuousClock.Instant
        var connection: UpstreamConnection?
        /// The connection came from the pool (it may have gone stale there); cleared once
        /// the request has been retried on a new one.
        var reused = false
        var requestEnded = false
        var status: Int?
        /// From the request's start to the upstream's response head.
        var upstreamDuration: Duration?
        /// Response body bytes written to the client.
        var bytesOut = 0
        var awaitingWritability = false

        init(plan: FastProxy.Plan, started: ContinuousClock.Instant) {
            self.plan = plan
            self.started = started
        }
    }

    init(proxy: FastProxy) {
        self.proxy = proxy
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.context = nil
    }

    // MARK: Client side

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let part = unwrapInboundIn(data)
        if swallowNextEnd, case .end = part {
            swallowNextEnd = false
            return
        }
        if exchange != nil || !waiting.isEmpty {
            if exchange?.requestEnded == false, case .end = part {
                exchange?.requestEnded = true
            } else {
                waiting.append(.part(part))
            }
            return
        }
        dispatch(part, context: context)
    }

    private func dispatch(_ part: HTTPServerRequestPart, context: ChannelHandlerContext) {
        if case .head(let request) = part {
            if hummingbirdResponsesOutstanding == 0 {
                if memo == nil { memo = FastProxy.ConnectionMemo(peer: context.channel.remoteAddress) }
                if let plan = proxy.plan(request, connection: &memo!) {
                    start(plan, context: context)
                    return
                }
            }
            hummingbirdResponsesOutstanding += 1
        }
        passedOnSinceReadComplete = true
        context.fireChannelRead(wrapInboundOut(part))
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        if passedOnSinceReadComplete {
            passedOnSinceReadComplete = false
            context.fireChannelReadComplete()
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        // A parser error behind a request proxied here belongs after its response.
        if exchange != nil || !waiting.isEmpty {
            waiting.append(.error(error))
        } else {
            context.fireErrorCaught(error)
        }
    }

    func read(context: ChannelHandlerContext) {
        // Holding every read while a request is proxied would cost two epoll_ctl calls per
        // request; holding them once a pipelining client has this much waiting bounds memory.
        if exchange != nil && waiting.count >= Self.maxWaiting {
            readHeld = true
        } else {
            context.read()
        }
    }

    /// Parts (of pipelined requests) that may wait behind a proxied one before reading stops.
    private static let maxWaiting = 64

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        // Only Hummingbird's responses pass here; this handler's own go from its context on.
        context.write(data, promise: promise)
        if case .end = unwrapOutboundIn(data) {
            hummingbirdResponsesOutstanding -= 1
            if hummingbirdResponsesOutstanding == 0 { replayWaiting(context: context) }
        }
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        if context.channel.isWritable, let exchange, exchange.awaitingWritability {
            exchange.awaitingWritability = false
            exchange.connection?.handlerOnLoop.resume()
        }
        context.fireChannelWritabilityChanged()
    }

    func channelInactive(context: ChannelHandlerContext) {
        if let connection = exchange?.connection {
            connection.abort(.closed)
        }
        if exchange != nil { proxy.abandoned() }
        exchange = nil
        waiting.removeAll()
        context.fireChannelInactive()
    }

    private func replayWaiting(context: ChannelHandlerContext) {
        while exchange == nil, let next = waiting.popFirst() {
            switch next {
            case .part(let part): dispatch(part, context: context)
            case .error(let error): context.fireErrorCaught(error)
            }
        }
        if exchange == nil && passedOnSinceReadComplete {
            passedOnSinceReadComplete = false
            context.fireChannelReadComplete()
        }
        if exchange == nil && readHeld {
            readHeld = false
            context.read()
        }
    }

    // MARK: Upstream side

    private func start(_ plan: FastProxy.Plan, context: ChannelHandlerContext) {
        let exchange = Exchange(plan: plan, started: .now)
        self.exchange = exchange
        proxy.started()
        if let connection = plan.route.pool.idleConnection(on: context.eventLoop) {
            exchange.reused = true
            send(exchange, on: connection)
            return
        }
        connectAndSend(exchange, context: context)
    }

    private func connectAndSend(_ exchange: Exchange, context: ChannelHandlerContext) {
        let route = exchange.plan.route
        route.pool.connect(on: context.eventLoop, timeout: min(TimeAmount(route.timeout), .seconds(2)))
            .assumeIsolated()
            .whenComplete { result in
                switch result {
                case .success(let connection):
                    guard self.exchange === exchange else {
                        connection.abort(.closed)
                        return
                    }
                    self.send(exchange, on: connection)
                case .failure:
                    self.upstreamFailed(.refused)
                }
            }
    }

    private func send(_ exchange: Exchange, on connection: UpstreamConnection) {
        exchange.connection = connection
        let upstream = connection.handlerOnLoop
        do {
            try upstream.send(exchange.plan.upstreamHead, hasBody: false)
        } catch {
            upstreamFailed(error)
            return
        }
        upstream.stream(to: self, timeout: TimeAmount(exchange.plan.route.timeout))
    }

    func upstreamPart(_ part: HTTPClientResponsePart) -> Bool {
        guard let context, let current = exchange else { return false }
        switch part {
        case .head(let head):
            guard current.status == nil else {
                upstreamFailed(.malformedResponse)
                return false
            }
            let status = Int(head.status.code)
            current.status = status
            current.upstreamDuration = .now - current.started
            current.plan.route.metrics.answered(status: status, after: current.upstreamDuration!)
            let response = HTTPResponseHead(
                version: .http1_1,
                status: head.status,
                headers: ForwardedHeaders.response(from: head.headers, requestID: current.plan.requestID)
            )
            context.write(wrapOutboundOut(.head(response)), promise: nil)
            return true
        case .body(let chunk):
            guard current.status != nil else {
                upstreamFailed(.malformedResponse)
                return false
            }
            current.bytesOut += chunk.readableBytes
            context.write(wrapOutboundOut(.body(.byteBuffer(chunk))), promise: nil)
            if context.channel.isWritable { return true }
            // Wait for the client to take what is buffered. The flush can make the channel
            // writable again at once (writability then changes inside it), so look again after.
            current.awaitingWritability = true
            context.flush()
            if context.channel.isWritable {
                current.awaitingWritability = false
                return true
            }
            return false
        case .end(let trailers):
            guard let status = current.status, let connection = current.connection else {
                upstreamFailed(.malformedResponse)
                return false
            }
            context.writeAndFlush(wrapOutboundOut(.end(trailers)), promise: nil)
            current.plan.route.pool.releaseOnLoop(connection)
            finish(status: status)
            return true
        }
    }

    /// Flushes once per read from the upstream, not per part: a small response's head, body
    /// and end usually arrive in one read, and the end's flush then sends them together.
    func upstreamReadComplete() {
        context?.flush()
    }

    /// Before the response head: the spec's 502/504 to the client. After it: the client's
    /// connection is closed, so a broken body can never pass for a complete one.
    func upstreamFailed(_ error: UpstreamError) {
        guard let context, let current = exchange else { return }
        current.connection?.abort(error)
        // UpstreamExchange's rule: a reused connection that closed before any answer may
        // have been closed by the upstream just as it was taken; a request without a body
        // and with an idempotent method is sent once more, on a new connection.
        if error == .closed, current.reused, current.status == nil, current.plan.upstreamHead.method.isSafeToRetry {
            current.reused = false
            current.connection = nil
            connectAndSend(current, context: context)
            return
        }
        current.plan.route.metrics.failed(error.description)
        if current.status != nil {
            proxy.logger.warning("upstream failed mid-body; closing the client connection", metadata: [
                "route": .string(current.plan.route.name), "kind": .string(error.description),
                "request_id": .string(current.plan.requestID),
            ])
            exchange = nil
            proxy.abandoned()
            context.close(promise: nil)
            return
        }
        let answer = error == .timeout ? GatewayError.upstreamTimeout : GatewayError.upstreamUnavailable
        if error != .timeout {
            proxy.logger.warning("upstream unavailable", metadata: [
                "route": .string(current.plan.route.name), "kind": .string(error.description),
                "request_id": .string(current.plan.requestID),
            ])
        }
        let (head, body) = answer.channelParts(requestID: current.plan.requestID)
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        context.write(wrapOutboundOut(.body(.byteBuffer(body))), promise: nil)
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
        current.bytesOut = body.readableBytes
        finish(status: answer.status.code)
    }

    private func finish(status: Int) {
        guard let current = exchange else { return }
        proxy.finished(current.plan, status: status, started: current.started, upstreamDuration: current.upstreamDuration, bytesOut: current.bytesOut)
        swallowNextEnd = !current.requestEnded
        exchange = nil
        if current.plan.closeAfter {
            // ClientProtectionHandler closes the connection once this response is out:
            // nothing after it is taken.
            waiting.removeAll()
            readHeld = false
            return
        }
        if let context { replayWaiting(context: context) }
    }
}
