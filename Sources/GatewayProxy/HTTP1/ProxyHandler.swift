import GatewayEdge
import NIOCore
import NIOHTTP1

/// The proxy engine's place in a public connection's pipeline: every request for a route is
/// answered here, on the connection's event loop, by a ``ProxyExchange``; everything else
/// goes on to Hummingbird (the gateway's own endpoints) untouched.
///
/// Why here and not in Hummingbird: its async handler adds task switches, an HTTPTypes
/// conversion each way and allocations before any forwarding starts (docs/DECISIONS.md, "One
/// proxy engine on the event loop"). It sits right after the HTTP/1 codec and
/// ``ClientProtectionHandler`` (``GatewayHTTP1Channel``), in NIO's own HTTP/1 types.
///
/// The order of requests and answers is ``ProxyConnectionStateMachine``'s; this handler only
/// does what it says.
///
/// A proxied answer is written as bytes (``ClientAnswerHead``, ``ClientAnswerFraming``) from
/// the context of NIO's `HTTPResponseEncoder`, so it goes on below the encoder: neither
/// ``ClientProtectionHandler`` nor the encoder handles its parts one by one (a pipeline hop
/// and a conversion each). ``ClientProtectionHandler`` is told of its head and end directly,
/// and still decides what the end means for the connection. Hummingbird's answers pass this
/// handler and go through both as parts; one request is answered at a time, so the two never
/// interleave.
package final class ProxyHandler: ChannelDuplexHandler, RemovableChannelHandler, ProxyDownstream {
    package typealias InboundIn = HTTPServerRequestPart
    package typealias InboundOut = HTTPServerRequestPart
    package typealias OutboundIn = HTTPServerResponsePart
    package typealias OutboundOut = HTTPServerResponsePart

    private let engine: ProxyEngine
    /// Added when the first request is passed on (an HTTP/2 stream's way to Hummingbird), once.
    private var passedOnHandlers: (any PassedOnRequestHandlers)?
    private var context: ChannelHandlerContext?
    private var state = ProxyConnectionStateMachine()
    /// Not an optional: testing or unwrapping one stored here copied the whole memo.
    private var memo = ProxyEngine.ConnectionMemo()
    /// The exchange of the proxied request under way (kept until its request has ended, so
    /// late body parts find it).
    private var exchange: ProxyExchange?
    /// Set while actions are being performed, so an exchange that ends inside one does not
    /// start a second loop.
    private var performing = false
    /// Whether anything went on to Hummingbird since the last read completed: when nothing
    /// did, the read-complete event stops here instead of waking Hummingbird's reader.
    private var passedOnSinceReadComplete = false
    /// Between a read from the client and its read-complete event: what an exchange writes
    /// upstream meanwhile is flushed once, at the read-complete (``ProxyExchange/clientReadComplete()``),
    /// so a request head and the body that came with it leave in one write.
    package private(set) var readUnderWay = false
    /// The context of NIO's HTTP/1 encoder, from which proxied answers are written as bytes.
    /// Nil in an HTTP/2 stream's child channel, which has none: there (where no request for a
    /// route arrives, ``HTTP2StreamRouter`` answering those) an answer goes as NIO's parts.
    private var answerContext: ChannelHandlerContext?
    /// Told of each proxied answer's head and end (on the HTTP/1.1 pipeline).
    private var protection: ClientProtectionHandler?
    /// The method of the proxied request under way (a `HEAD` is answered without a body).
    private var proxiedMethod = HTTPMethod.GET
    /// How the body of the proxied answer being written is delimited.
    private var answerFraming = ClientAnswerFraming.bodiless
    /// The connection's allocator, kept: asking the channel for it each time retains and releases.
    private var allocator = ByteBufferAllocator()
    /// The buffer proxied answer heads are written into, made at the first one
    /// (``ClientAnswerHead/write(_:requestMethod:into:)``).
    private var headBuffer: ByteBuffer?

    package init(engine: ProxyEngine, passedOnHandlers: (any PassedOnRequestHandlers)? = nil) {
        self.engine = engine
        self.passedOnHandlers = passedOnHandlers
    }

    package func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        let pipeline = context.pipeline.syncOperations
        answerContext = try? pipeline.context(handlerType: HTTPResponseEncoder.self)
        allocator = context.channel.allocator
        protection = try? pipeline.handler(type: ClientProtectionHandler.self)
    }

    package func handlerRemoved(context: ChannelHandlerContext) {
        self.context = nil
        answerContext = nil
        protection = nil
    }

    // MARK: Client side

    package func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        readUnderWay = true
        state.received(.part(unwrapInboundIn(data)))
        performActions()
    }

    package func errorCaught(context: ChannelHandlerContext, error: any Error) {
        state.received(.error(error))
        performActions()
    }

    package func channelReadComplete(context: ChannelHandlerContext) {
        readUnderWay = false
        exchange?.clientReadComplete()
        if passedOnSinceReadComplete {
            passedOnSinceReadComplete = false
            context.fireChannelReadComplete()
        }
    }

    package func read(context: ChannelHandlerContext) {
        if state.readRequested() { context.read() }
    }

    package func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        // Only Hummingbird's responses pass here; the exchanges write from this context on.
        context.write(data, promise: promise)
        if case .end = unwrapOutboundIn(data) {
            state.responseEnded()
            performActions()
        }
    }

    package func channelWritabilityChanged(context: ChannelHandlerContext) {
        exchange?.clientWritabilityChanged()
        context.fireChannelWritabilityChanged()
    }

    package func channelInactive(context: ChannelHandlerContext) {
        exchange?.clientClosed()
        exchange = nil
        state.closed()
        context.fireChannelInactive()
    }

    /// Does what the state machine says until it waits, then lets a held read go if it may.
    private func performActions() {
        guard !performing, let context else { return }
        performing = true
        while let action = state.next() {
            perform(action, context: context)
        }
        performing = false
        if passedOnSinceReadComplete {
            // Parts replayed to Hummingbird are taken when the read completes.
            passedOnSinceReadComplete = false
            context.fireChannelReadComplete()
        }
        if state.releaseHeldRead() { context.read() }
    }

    private func perform(_ action: ProxyConnectionStateMachine.Action, context: ChannelHandlerContext) {
        switch action {
        case .start(let head):
            memo.notePeer(of: context.channel)
            if let request = engine.request(for: head, memo: &memo) {
                state.assign(.proxy)
                proxiedMethod = head.method
                let exchange = ProxyExchange(request: request, engine: engine, client: self, eventLoop: context.eventLoop)
                self.exchange = exchange
                exchange.start(memo: &memo)
            } else {
                state.assign(.hummingbird)
                if let passedOnHandlers {
                    self.passedOnHandlers = nil
                    do {
                        try passedOnHandlers.addHandlers(to: context.pipeline.syncOperations)
                    } catch {
                        // The channel is closing: nobody could serve the request.
                        context.close(promise: nil)
                        return
                    }
                }
                passOn(.head(head), context: context)
            }
        case .deliver(let part, .proxy):
            exchange?.requestPart(part)
        case .deliver(let part, .hummingbird):
            passOn(part, context: context)
        case .deliverError(let error, .proxy):
            exchange?.clientFailed(error)
        case .deliverError(let error, .hummingbird):
            context.fireErrorCaught(error)
        }
    }

    private func passOn(_ part: HTTPServerRequestPart, context: ChannelHandlerContext) {
        passedOnSinceReadComplete = true
        context.fireChannelRead(wrapInboundOut(part))
    }

    // MARK: For the exchange (ProxyDownstream)

    package func writeAnswerHead(_ head: ProxyAnswerHead) {
        guard let answerContext else {
            context?.write(wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: head.status, headers: head.headers))), promise: nil)
            return
        }
        if headBuffer == nil { headBuffer = allocator.buffer(capacity: 512) }
        headBuffer!.clear()
        answerFraming = ClientAnswerHead.write(head, requestMethod: proxiedMethod, into: &headBuffer!)
        protection?.answerHeadWritten(status: Int(head.status.code))
        answerContext.write(NIOAny(headBuffer!), promise: nil)
    }

    package func writeAnswerBody(_ chunk: ByteBuffer) {
        guard let answerContext else {
            context?.write(wrapOutboundOut(.body(.byteBuffer(chunk))), promise: nil)
            return
        }
        answerFraming.frame(chunk, allocator: allocator) { bytes in
            answerContext.write(NIOAny(bytes), promise: nil)
        }
    }

    package func endAnswer(trailers: HTTPHeaders?, closingAfter: Bool) {
        guard let context else { return }
        let written = closingAfter ? context.eventLoop.makePromise(of: Void.self) : nil
        if let answerContext {
            let end = answerFraming.end(trailers: trailers, allocator: allocator)
            answerFraming = .bodiless
            if let protection {
                protection.answerEnded(promise: written) { Self.write(end, from: answerContext, promise: $0) }
            } else {
                Self.write(end, from: answerContext, promise: written)
            }
        } else {
            context.write(wrapOutboundOut(.end(trailers)), promise: written)
        }
        context.flush()
        written?.futureResult.assumeIsolated().whenComplete { _ in
            context.close(promise: nil)
        }
    }

    /// Writes an answer's end; an empty write when there is nothing to end with but a promise
    /// to complete, so that it completes in order, after the answer's bytes.
    private static func write(_ end: ByteBuffer?, from answerContext: ChannelHandlerContext, promise: EventLoopPromise<Void>?) {
        guard end != nil || promise != nil else { return }
        answerContext.write(NIOAny(end ?? ByteBuffer()), promise: promise)
    }

    package func flushAnswer() {
        context?.flush()
    }

    package var answerWritable: Bool {
        context?.channel.isWritable ?? true
    }

    /// Closes the connection: an HTTP/1.1 answer broken off mid-way shows only so.
    package func abortAnswer() {
        context?.close(promise: nil)
    }

    /// The exchange cannot take its request's body for now: stop reading the client.
    package func pauseRequestBody() {
        state.pauseBody()
    }

    /// The exchange can take body parts again.
    package func resumeRequestBody() {
        state.resumeBody()
        if !performing, state.releaseHeldRead() { context?.read() }
    }

    /// The exchange's answer has ended (written, or the connection is being closed).
    package func exchangeAnswered() {
        state.resumeBody()
        state.responseEnded()
        performActions()
    }
}
