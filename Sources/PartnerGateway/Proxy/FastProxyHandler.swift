import HTTPTypes
import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import NIOHTTP1
import NIOHTTPTypes

/// Proxies the requests ``FastProxy`` accepts entirely on the client connection's event loop,
/// handing everything else to Hummingbird untouched.
///
/// Why: a request through Hummingbird's async handler costs several task switches and
/// allocations before any forwarding starts; measured, that machinery cost more CPU than the
/// proxying (docs/DECISIONS.md, "Forwarding"). Here a cached bearer request goes from the
/// decoded head to a pooled upstream connection on the same loop and back with plain calls
/// and future callbacks: the way nginx and Envoy forward.
///
/// It sits just before Hummingbird's own handler (after `HTTPConnectionStateHandler`, so
/// idle timeouts and graceful shutdown see these requests like any other). Responses leave a
/// keep-alive connection in request order: a request is proxied here only while Hummingbird
/// has no response outstanding, and whatever arrives while one is proxied here waits until
/// its response has ended.
final class FastProxyHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    private let proxy: FastProxy
    private var context: ChannelHandlerContext?
    /// Heads passed to Hummingbird whose response has not ended yet.
    private var hummingbirdResponsesOutstanding = 0
    private var exchange: Exchange?
    /// Parts that arrived while a request was proxied here, replayed after it.
    private var waiting = CircularBuffer<HTTPRequestPart>()
    /// An exchange ended before its request's `.end` arrived: that part is this handler's.
    private var swallowNextEnd = false
    private var flushScheduled = false

    /// The request being proxied here. A class: the handler reads it at every step, and
    /// copying the plan (route, upstream head) each time showed in profiles.
    private final class Exchange {
        let plan: FastProxy.Plan
        let started: ContinuousClock.Instant
        var connection: UpstreamConnection?
        var requestEnded = false
        var status: Int?
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
                waiting.append(part)
            }
            return
        }
        dispatch(part, context: context)
    }

    private func dispatch(_ part: HTTPRequestPart, context: ChannelHandlerContext) {
        if case .head(let request) = part {
            if hummingbirdResponsesOutstanding == 0, let plan = proxy.plan(request, peer: context.channel.remoteAddress) {
                start(plan, context: context)
                return
            }
            hummingbirdResponsesOutstanding += 1
        }
        context.fireChannelRead(wrapInboundOut(part))
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        // Only Hummingbird's responses pass here; this handler's own go from its context on.
        if case .end = unwrapOutboundIn(data) {
            hummingbirdResponsesOutstanding -= 1
            context.write(data, promise: promise)
            if hummingbirdResponsesOutstanding == 0 { replayWaiting(context: context) }
            return
        }
        context.write(data, promise: promise)
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        if context.channel.isWritable, exchange?.awaitingWritability == true {
            exchange?.awaitingWritability = false
            readUpstream()
        }
        context.fireChannelWritabilityChanged()
    }

    func channelInactive(context: ChannelHandlerContext) {
        if let connection = exchange?.connection {
            connection.abort(.closed)
        }
        exchange = nil
        waiting.removeAll()
        context.fireChannelInactive()
    }

    private func replayWaiting(context: ChannelHandlerContext) {
        while exchange == nil, let part = waiting.popFirst() {
            dispatch(part, context: context)
        }
    }

    // MARK: Upstream side

    private func start(_ plan: FastProxy.Plan, context: ChannelHandlerContext) {
        exchange = Exchange(plan: plan, started: .now)
        let loop = context.eventLoop
        if let connection = plan.route.pool.idleConnection(on: loop) {
            send(on: connection)
            return
        }
        plan.route.pool.connect(on: loop, timeout: min(TimeAmount(plan.route.timeout), .seconds(2)))
            .assumeIsolated()
            .whenComplete { result in
                switch result {
                case .success(let connection):
                    guard self.exchange != nil else {
                        connection.abort(.closed)
                        return
                    }
                    self.send(on: connection)
                case .failure:
                    self.fail(.refused)
                }
            }
    }

    private func send(on connection: UpstreamConnection) {
        exchange?.connection = connection
        guard let plan = exchange?.plan else { return }
        do {
            try connection.handlerOnLoop.send(plan.upstreamHead, hasBody: false)
        } catch {
            fail(error)
            return
        }
        readUpstream()
    }

    /// Takes the next response part: at once when it is already read (a small response
    /// arrives whole), else when it arrives.
    private func readUpstream() {
        guard let exchange, let connection = exchange.connection else { return }
        do {
            switch try connection.handlerOnLoop.nextPart(timeout: TimeAmount(exchange.plan.route.timeout)) {
            case .ready(let part):
                receive(part)
            case .pending(let future):
                scheduleFlush()
                future.assumeIsolated().whenComplete { result in
                    switch result {
                    case .success(let part): self.receive(part)
                    case .failure(let error): self.fail(error as? UpstreamError ?? .closed)
                    }
                }
            }
        } catch {
            fail(error)
        }
    }

    private func receive(_ part: HTTPClientResponsePart) {
        guard let context, let current = exchange else { return }
        switch part {
        case .head(let head):
            guard current.status == nil else { return fail(.malformedResponse) }
            let status = Int(head.status.code)
            exchange?.status = status
            current.plan.route.metrics.answered(status: status, after: .now - current.started)
            var fields = ForwardedHeaders.response(from: head.headers)
            fields[.xRequestID] = current.plan.requestID
            let response = HTTPResponse(status: .init(code: status, reasonPhrase: head.status.reasonPhrase), headerFields: fields)
            context.write(wrapOutboundOut(.head(response)), promise: nil)
            readUpstream()
        case .body(let chunk):
            guard current.status != nil else { return fail(.malformedResponse) }
            context.write(wrapOutboundOut(.body(chunk)), promise: nil)
            if context.channel.isWritable {
                readUpstream()
            } else {
                // Wait for the client to take what is buffered. The flush can make the
                // channel writable again at once (writability then changes inside it), so
                // the flag is set first and checked after.
                exchange?.awaitingWritability = true
                context.flush()
                if context.channel.isWritable, exchange?.awaitingWritability == true {
                    exchange?.awaitingWritability = false
                    readUpstream()
                }
            }
        case .end(let trailers):
            guard let status = current.status, let connection = current.connection else { return fail(.malformedResponse) }
            let end = context.writeAndFlush(wrapOutboundOut(.end(trailers.map(ForwardedHeaders.trailers(from:)))))
            current.plan.route.pool.releaseOnLoop(connection)
            finish(status: status)
            if current.plan.closeAfter {
                end.assumeIsolated().whenComplete { _ in context.close(promise: nil) }
            }
        }
    }

    /// Flushes what was written once the current read has been handled, not now: a response
    /// head usually arrives in the same read as its body and end, and flushing at each would
    /// cost a system call apiece (the end's `writeAndFlush` then leaves nothing to do).
    private func scheduleFlush() {
        guard !flushScheduled, let context else { return }
        flushScheduled = true
        context.eventLoop.assumeIsolated().execute {
            self.flushScheduled = false
            self.context?.flush()
        }
    }

    /// Before the response head: the spec's 502/504 to the client. After it: the client's
    /// connection is closed, so a broken body can never pass for a complete one.
    private func fail(_ error: UpstreamError) {
        guard let context, let current = exchange else { return }
        current.connection?.abort(error)
        current.plan.route.metrics.failed(error.description)
        if current.status != nil {
            proxy.logger.warning("upstream failed mid-body; closing the client connection", metadata: [
                "route": .string(current.plan.route.name), "kind": .string(error.description),
            ])
            exchange = nil
            context.close(promise: nil)
            return
        }
        let answer = error == .timeout ? GatewayError.upstreamTimeout : GatewayError.upstreamUnavailable
        if error != .timeout {
            proxy.logger.warning("upstream unavailable", metadata: [
                "route": .string(current.plan.route.name), "kind": .string(error.description),
            ])
        }
        let (head, body) = answer.channelParts(requestID: current.plan.requestID)
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        context.write(wrapOutboundOut(.body(body)), promise: nil)
        let end = context.writeAndFlush(wrapOutboundOut(.end(nil)))
        finish(status: answer.status.code)
        if current.plan.closeAfter {
            end.assumeIsolated().whenComplete { _ in context.close(promise: nil) }
        }
    }

    private func finish(status: Int) {
        guard let current = exchange else { return }
        proxy.finished(current.plan, status: status, started: current.started)
        swallowNextEnd = !current.requestEnded
        exchange = nil
        if let context { replayWaiting(context: context) }
    }
}

/// Puts a ``FastProxyHandler`` right before Hummingbird's own handler once the connection's
/// pipeline is complete, then removes itself. Hummingbird adds `additionalChannelHandlers`
/// before its `HTTPConnectionStateHandler`; the fast path belongs after it, so that idle
/// timeouts and graceful shutdown count its requests like Hummingbird's.
final class FastProxyInstaller: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart

    private let proxy: FastProxy

    init(proxy: FastProxy) {
        self.proxy = proxy
    }

    func handlerAdded(context: ChannelHandlerContext) {
        // An accepted connection is already active while its pipeline is being built, and
        // Hummingbird adds its state handler after this one: install on the next loop tick,
        // before the connection's first read (a request that came first would simply go to
        // Hummingbird).
        context.eventLoop.assumeIsolated().execute {
            self.install(context: context)
        }
    }

    private func install(context: ChannelHandlerContext) {
        let pipeline = context.pipeline.syncOperations
        if let state = try? pipeline.context(handlerType: HTTPConnectionStateHandler.self) {
            try? pipeline.addHandler(FastProxyHandler(proxy: proxy), position: .after(state.handler))
        }
        pipeline.removeHandler(context: context, promise: nil)
    }
}
