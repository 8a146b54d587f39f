import GatewayEdge
import GatewayPrimitives
import NIOCore
import NIOHTTP1

/// One HTTP/1 client connection from its bytes on, on every listener: its requests parsed
/// (``HTTP1RequestParser``, run here on each read: no `ByteToMessageHandler` in front), the
/// request edge, the order of requests and answers, keep-alive and closing, and (on the
/// public listener) the proxy engine, which answers every request for a route here, on the
/// connection's event loop; every other request goes on, untouched, to the handler after it
/// (the gateway's own endpoints, answered by Hummingbird's router). Slow or oversized clients
/// are cut off (docs/public-api.md, "Proxied routes"):
/// - a request head must arrive whole within `headerReadTimeout` of the connection opening
///   (first request) or of its first byte (later requests on a keep-alive connection), else
///   the connection is closed. That first byte is seen by a raw-bytes handler in front of
///   this one that stays while the connection parks, ``RequestStartWatcher``, which this
///   handler installs and drives;
/// - a connection with no response outstanding for `idleTimeout` is closed;
/// - every head passes the edge (``RequestEdge``); a refused one is answered
///   `400 INVALID_REQUEST` in its turn and the connection closed lingering; a head over the
///   parser's limit is `431`, any other parser error before a head is complete `400` (in the
///   gateway's error shape, not Hummingbird's bare `400`);
/// - a request body must keep arriving (`server.body_read_timeout`, ``RequestEdge``): `408`
///   if no response has started, and the connection closes;
/// - `Expect: 100-continue` is answered `100 Continue` when the request's turn comes
///   (Hummingbird does not, and clients such as curl would wait a second before the body).
/// The error responses carry a generated `X-Request-Id`, like every other response.
///
/// What to do is decided by ``StateMachine`` (requests, answers, keep-alive, held reads, the
/// idle and lingering deadlines, parking) and ``RequestEdge`` (heads and bodies); this handler
/// only performs it. The idle, body and lingering-close deadlines are each a ``DeadlineTimer``.
/// Idle for ``ConnectionParking/delay`` with nothing outstanding, a plain connection parks:
/// this handler and NIO's encoder leave the pipeline, and the watcher puts a new set back at
/// the next byte.
///
/// Answers reach it two ways, and both report to the one machine: the endpoints' as parts
/// through ``write(context:data:promise:)`` on their way to NIO's encoder (the body of a response
/// to `HEAD` dropped here: the encoder is paired with no decoder), the proxy engine's as
/// bytes (``ClientResponseHead``, ``ClientResponseFraming``) written from the encoder's context,
/// below it, through ``ProxyDownstream``: neither the encoder nor another handler touches
/// their parts one by one (docs/DECISIONS.md, "Answers written as bytes"). One request is
/// answered at a time, so the two never interleave.
///
/// Why one handler: the proxy engine's place is before any conversion to HTTPTypes (no
/// proxied head converted and back; docs/DECISIONS.md, "One proxy engine on the event loop"),
/// and the connection rules must see every request; one machine keeps each rule in one place
/// and saves a pipeline hop per part.
package final class HTTP1ConnectionHandler: ChannelDuplexHandler, RemovableChannelHandler, ProxyDownstream {
    package typealias InboundIn = ByteBuffer
    package typealias InboundOut = HTTPServerRequestPart
    package typealias OutboundIn = HTTPServerResponsePart
    package typealias OutboundOut = HTTPServerResponsePart

    private let watcher: RequestStartWatcher
    /// The proxy engine on the public listener, the forward authorizer on the authorization
    /// listener. The bodies of requests it takes are timed between reads, every other body
    /// (the gateway's own endpoints) as a whole.
    private let proxy: (any ProxiedRequestSource)?
    private var state: StateMachine
    private var edge: RequestEdge
    private var parser: HTTP1RequestParser
    private(set) var unread = UnreadBytes()
    private var input = Input.open
    private var context: ChannelHandlerContext?
    /// A response's end waits for the loop's pass to end before it is flushed (``PassFlushes``).
    package var passFlushPending = false
    /// Set where the machine says (the idle timeout, parking).
    private var idleTimer: DeadlineTimer?
    /// Where the connection parks once idle for ``ConnectionParking/delay``, and the handlers
    /// it gives up then; nil: it never does.
    private let parking: (lots: ConnectionParking, handlers: any ParkableHandlers)?
    private var bodyTimer: DeadlineTimer?
    /// A lingering close's end (``LingerDeadline``, kept by the machine).
    private var lingerTimer: DeadlineTimer?
    /// Not an optional: testing or unwrapping one stored here copied the whole memo.
    private var memo = ProxyEngine.ConnectionMemo()
    /// The exchange of the proxied request under way (kept until the next request starts, so
    /// late body parts find it).
    private var exchange: (any ProxiedRequestExchange)?
    /// Set while actions are being performed, so an exchange that ends inside one does not
    /// start a second loop.
    private var performing = false
    /// Between a read from the client and its read-complete event: what an exchange writes
    /// upstream meanwhile is flushed once, at the read-complete (``ProxiedRequestExchange/clientReadComplete()``),
    /// so a request head and the body that came with it leave in one write.
    package private(set) var readUnderWay = false
    /// The context of NIO's HTTP/1 encoder, from which proxied responses are written as bytes.
    private var responseContext: ChannelHandlerContext?
    /// How the body of the proxied response being written is delimited.
    private var responseFraming = ClientResponseFraming.bodiless
    /// The connection's allocator, kept: asking the channel for it each time retains and releases.
    private var allocator = ByteBufferAllocator()
    /// The buffer proxied response heads are written into, made at the first one.
    private var headBuffer: ByteBuffer?

    package init(
        headerReadTimeout: TimeAmount,
        idleTimeout: TimeAmount?,
        bodyReadTimeout: TimeAmount,
        maxHeadBytes: Int,
        proxy: (any ProxiedRequestSource)?,
        anchoredPrefix: String? = nil,
        watcher: RequestStartWatcher? = nil,
        parking: (lots: ConnectionParking, handlers: any ParkableHandlers)? = nil
    ) {
        self.watcher = watcher ?? RequestStartWatcher(headerReadTimeout: headerReadTimeout, parks: parking != nil)
        self.parking = parking
        state = StateMachine(idleTimeout: idleTimeout, parks: parking != nil)
        self.proxy = proxy
        // The parser limits the head as it reads it (`headerOverflow`, 431).
        parser = HTTP1RequestParser(maxHeadBytes: maxHeadBytes)
        edge = RequestEdge(maxHeaderListSize: nil, bodyReadTimeout: bodyReadTimeout, anchoredPrefix: anchoredPrefix)
    }

    package func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        // Strong references, let go of when the timers are cancelled (``DeadlineTimer``).
        idleTimer = DeadlineTimer(eventLoop: context.eventLoop) {
            self.idleDeadlinePassed()
        }
        bodyTimer = DeadlineTimer(eventLoop: context.eventLoop) {
            self.bodyDeadlinePassed()
        }
        lingerTimer = DeadlineTimer(eventLoop: context.eventLoop) {
            self.context?.close(promise: nil)
        }
        let pipeline = context.pipeline.syncOperations
        // Back from a parking, the watcher is there already.
        if !watcher.isAdded { try? pipeline.addHandler(watcher, position: .first) }
        responseContext = try? pipeline.context(handlerType: HTTPResponseEncoder.self)
        allocator = context.channel.allocator
        if context.channel.isActive { perform(state.connectionActive(now: context.eventLoop.now), context: context) }
    }

    package func handlerRemoved(context: ChannelHandlerContext) {
        cancelTimers()
        flushIfPending(context)
        self.context = nil
        responseContext = nil
        unread = UnreadBytes()
    }

    package func channelActive(context: ChannelHandlerContext) {
        perform(state.connectionActive(now: context.eventLoop.now), context: context)
        context.fireChannelActive()
    }

    package func channelInactive(context: ChannelHandlerContext) {
        inputEnded(context: context)
        cancelTimers()
        _ = edge.bodyEnded()
        exchange?.clientClosed()
        exchange = nil
        perform(state.closed(), context: context)
        context.fireChannelInactive()
    }

    // MARK: From the client

    package func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let read = unwrapInboundIn(data)
        switch input {
        case .open:
            break
        case .refused(let error):
            // As `ByteToMessageHandler` after a decoding error: what follows is an error too.
            errorCaught(context: context, error: ByteToMessageDecoderError.dataReceivedInErrorState(error, read))
            return
        case .ended:
            return
        }
        if state.discardsInput {
            perform(state.inputDiscarded(now: context.eventLoop.now), context: context)
            return
        }
        var bytes = unread.take(appending: read)
        do {
            while let part = try parser.next(&bytes) {
                guard partRead(part, context: context) else { return }
                // A request's end may take no bytes of its own (a bodiless head, a body's last
                // byte): it goes with the part before it.
                if parser.endsNext, let end = try parser.next(&bytes) {
                    guard partRead(end, context: context) else { return }
                }
            }
        } catch {
            input = .refused(error)
            errorCaught(context: context, error: error)
            return
        }
        guard case .open = input else { return }
        unread.keep(bytes)
    }

    /// One part of a request, parsed. False when input is discarded from now on (a head was
    /// refused, the connection is closing): the rest of the bytes are dropped unparsed.
    private func partRead(_ part: ClientRequestPart, context: ChannelHandlerContext) -> Bool {
        if state.discardsInput {
            perform(state.inputDiscarded(now: context.eventLoop.now), context: context)
            return false
        }
        readUnderWay = true
        switch part {
        case .head(let received):
            watcher.headArrived()
            let head: ClientRequestHead
            switch edge.admit(received) {
            case .success(let admitted):
                head = admitted
            case .failure(let error):
                perform(state.headRefused(error), context: context)
                return true
            }
            var expectsContinue = false
            if RequestEdge.declaresBody(head) {
                let limit = BodyReadDeadline.Limit(proxied: proxy?.takes(head, memo: &memo) == true)
                bodyTimer?.apply(edge.bodyStarted(limit: limit, now: context.eventLoop.now))
                head.forEachField { field in
                    if HeaderName.equals(field.name, "expect") && HeaderName.equals(field.value, "100-continue") { expectsContinue = true }
                }
            }
            perform(state.headAdmitted(head, expectsContinue: expectsContinue, now: context.eventLoop.now), context: context)
        case .body(let chunk):
            bodyTimer?.apply(edge.bodyRead())
            perform(state.bodyRead(chunk), context: context)
        case .end(let trailers):
            bodyTimer?.apply(edge.bodyEnded())
            watcher.requestEnded()
            perform(state.endRead(trailers, now: context.eventLoop.now), context: context)
        }
        performActions()
        return true
    }

    /// The client sent all it will, or the connection closed: a request cut short is a
    /// parser error (`invalidEOFState`), answered while the connection can still answer.
    private func inputEnded(context: ChannelHandlerContext) {
        guard case .open = input else { return }
        input = .ended
        let rest = unread.take()
        guard !state.discardsInput else { return }
        do {
            try parser.inputEnded(unread: rest ?? ByteBuffer())
        } catch {
            errorCaught(context: context, error: error)
        }
    }

    package func errorCaught(context: ChannelHandlerContext, error: any Error) {
        if let parserError = error as? HTTPParserError {
            perform(state.parserFailed(parserError), context: context)
        } else {
            perform(state.errorCaught(error), context: context)
        }
        performActions()
    }

    package func channelReadComplete(context: ChannelHandlerContext) {
        readUnderWay = false
        exchange?.clientReadComplete()
    }

    package func read(context: ChannelHandlerContext) {
        perform(state.readRequested(), context: context)
    }

    /// Asks the channel for more: from now on the body's wait counts (``RequestEdge``).
    private func read(from context: ChannelHandlerContext) {
        bodyTimer?.apply(edge.readRequested(now: context.eventLoop.now))
        context.read()
    }

    package func channelWritabilityChanged(context: ChannelHandlerContext) {
        exchange?.clientWritabilityChanged()
        context.fireChannelWritabilityChanged()
    }

    package func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if case ChannelEvent.inputClosed = event {
            inputEnded(context: context)
            // The client has sent all it will (the listener allows half-closure): its requests
            // are answered, then the connection closes.
            perform(state.inputClosed(), context: context)
            context.fireUserInboundEventTriggered(event)
            return
        }
        guard event is ChannelShouldQuiesceEvent else {
            context.fireUserInboundEventTriggered(event)
            return
        }
        // The listener drains: the next answer is the last, an event stream under way ends.
        perform(state.drain(now: context.eventLoop.now), context: context)
        exchange?.drain()
    }

    /// Does what the machine says until it waits (its last action may let a held read go).
    private func performActions() {
        guard !performing, let context else { return }
        performing = true
        while true {
            let action = state.next()
            if case .none = action { break }
            perform(action, context: context)
        }
        performing = false
    }

    private func perform(_ action: StateMachine.Action, context: ChannelHandlerContext) {
        switch action {
        case .none:
            break
        case .start(let head, let sendContinue):
            if sendContinue {
                context.writeAndFlush(wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: .continue))), promise: nil)
            }
            if let proxy {
                memo.notePeer(of: context.channel)
                if let exchange = proxy.makeExchange(for: head, answeringThrough: self, memo: &memo, on: context.eventLoop) {
                    perform(state.assigned(.proxy), context: context)
                    self.exchange = exchange
                    exchange.start(memo: &memo)
                    if state.isDraining { exchange.drain() }
                    return
                }
            }
            perform(state.assigned(.hummingbird), context: context)
            // The gateway's own endpoints read NIO's head: its fields made `String`s here.
            passOn(.head(head.requestHead), context: context)
        case .deliver(let part, .proxy):
            exchange?.requestPart(part)
        case .deliver(let part, .hummingbird):
            passOn(part, context: context)
        case .deliverError(let error, .proxy):
            exchange?.clientFailed(error)
        case .deliverError(let error, .hummingbird):
            context.fireErrorCaught(error)
        case .read:
            read(from: context)
        case .respondAndClose(let error):
            watcher.headArrived()
            error.write(to: context, closing: true).whenComplete { _ in context.close(promise: nil) }
        case .respondAndLinger(let error):
            error.write(to: context, closing: true).whenComplete { _ in self.closeLingering(context) }
        case .close:
            context.close(promise: nil)
        case .startLingering(let change):
            context.close(mode: .output, promise: nil)
            watcher.connectionClosing()
            lingerTimer?.apply(change)
        case .lingerTimer(let change):
            lingerTimer?.apply(change)
        case .idleTimer(let change):
            idleTimer?.apply(change)
        case .park(let idleDeadline):
            park(until: idleDeadline, context: context)
        case .writeEnd, .writeEndThenRespond, .writeEndThenLinger, .writeEndThenClose, .upgrade:
            // Answers to a response's end and to an upgrade: performed where those are reported.
            assertionFailure("\(action) outside a response's end or an upgrade")
        }
    }

    private func passOn(_ part: HTTPServerRequestPart, context: ChannelHandlerContext) {
        context.fireChannelRead(wrapInboundOut(part))
    }

    // MARK: The endpoints' responses

    package func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        switch unwrapOutboundIn(data) {
        case .head(var head):
            let status = Int(head.status.code)
            guard state.drainsWithResponse(status: status) else {
                perform(state.responseHeadWritten(status: status), context: context)
                context.write(data, promise: promise)
                return
            }
            head.headers.replaceOrAdd(name: "Connection", value: "close")
            perform(state.responseHeadWritten(status: status), context: context)
            context.write(wrapOutboundOut(.head(head)), promise: promise)
        case .body:
            guard !state.responseIsBodiless else {
                promise?.succeed()
                return
            }
            context.write(data, promise: promise)
        case .end:
            responseEnded(context: context, promise: promise) { context.write(data, promise: $0) }
            performActions()
        }
    }

    // MARK: The proxy engine's responses (ProxyDownstream)

    package func writeResponseHead(_ head: ProxyResponseHead) {
        guard let below = responseContext ?? context else { return }
        if headBuffer == nil { headBuffer = allocator.buffer(capacity: 512) }
        headBuffer!.clear()
        let status = Int(head.status.code)
        responseFraming = ClientResponseHead.write(
            head, requestMethod: state.responseIsBodiless ? .HEAD : .GET, closing: state.drainsWithResponse(status: status), into: &headBuffer!
        )
        if let context { perform(state.responseHeadWritten(status: status), context: context) }
        below.write(NIOAny(headBuffer!), promise: nil)
    }

    package func writeResponseBody(_ chunk: ByteBuffer) {
        guard let below = responseContext ?? context else { return }
        responseFraming.frame(chunk, allocator: allocator) { bytes in
            below.write(NIOAny(bytes), promise: nil)
        }
    }

    package func endResponse(trailers: HTTPHeaders?, closingAfter: Bool) {
        guard let context else { return }
        let below = responseContext ?? context
        let written = closingAfter ? context.eventLoop.makePromise(of: Void.self) : nil
        let end = responseFraming.end(trailers: trailers, allocator: allocator)
        responseFraming = .bodiless
        responseEnded(context: context, promise: written) { Self.write(end, from: below, promise: $0) }
        PassFlushes.flush(self, on: context.eventLoop)
        written?.futureResult.assumeIsolated().whenComplete { _ in
            context.close(promise: nil)
        }
    }

    /// Writes a response's end; an empty write when there is nothing to end with but a promise
    /// to complete, so that it completes in order, after the response's bytes.
    private static func write(_ end: ByteBuffer?, from below: ChannelHandlerContext, promise: EventLoopPromise<Void>?) {
        guard end != nil || promise != nil else { return }
        below.write(NIOAny(end ?? ByteBuffer()), promise: promise)
    }

    package func flushResponse() {
        context?.flush()
    }

    package var responseWritable: Bool {
        context?.channel.isWritable ?? true
    }

    /// Closes the connection: an HTTP/1.1 answer broken off mid-way shows only so.
    package func abortResponse() {
        guard let context else { return }
        perform(state.closed(), context: context)
        context.close(promise: nil)
    }

    /// The exchange cannot take its request's body for now: stop reading the client.
    package func pauseRequestBody() {
        guard let context else { return }
        perform(state.bodyPaused(), context: context)
    }

    /// The exchange can take body parts again.
    package func resumeRequestBody() {
        guard let context else { return }
        perform(state.bodyResumed(), context: context)
    }

    /// The upstream answered the WebSocket handshake `101` (already written): the connection
    /// leaves HTTP for a ``WebSocketTunnel``, whose handler goes in front of NIO's encoder so it
    /// takes every byte read; the head timer and this handler's deadlines stop.
    package func upgrade(to upstream: UpstreamConnection, idleTimeout: TimeAmount) -> WebSocketTunnel? {
        // Upgraded while the listener drains: told at once, as the open sockets were.
        let draining = state.isDraining
        guard let context, let codec = responseContext, case .upgrade = state.upgradeAnswered() else {
            upstream.abort(.closed)
            abortResponse()
            return nil
        }
        cancelTimers()
        // Done with once its record is written (it is finishing now): not kept for the
        // connection's life.
        exchange = nil
        let tunnel = WebSocketTunnel(eventLoop: context.eventLoop, idleTimeout: idleTimeout)
        do {
            let pipeline = context.pipeline.syncOperations
            try pipeline.addHandler(tunnel.client, position: .before(codec.handler))
            _ = pipeline.removeHandler(watcher)
        } catch {
            upstream.channel.close(promise: nil)
            abortResponse()
            return nil
        }
        // The upstream's parser is mid-read (its `101` is being handed out): its handlers
        // are swapped once that read is over. Neither side reads before the tunnel starts.
        context.eventLoop.assumeIsolated().execute {
            try? upstream.handlerOnLoop.handOver(to: tunnel.upstream)
            tunnel.start()
            if draining { tunnel.close(code: WebSocketTunnel.CloseCode.goingAway, reason: "shutdown") }
        }
        return tunnel
    }

    /// The exchange's response has ended (written, or the connection is being closed): the
    /// next request may start.
    package func exchangeAnswered() {
        if let context { perform(state.bodyResumed(), context: context) }
        performActions()
    }

    // MARK: The connection's rules

    /// The end of a response, written by `writeEnd`: what it means for the connection
    /// (keep-alive or close, a lingering close, a refused request answered next).
    private func responseEnded(context: ChannelHandlerContext, promise: EventLoopPromise<Void>?, writeEnd: (EventLoopPromise<Void>?) -> Void) {
        watcher.responseEnded()
        let action = state.responseEnded(now: context.eventLoop.now)
        switch action {
        case .writeEnd(let idleChange):
            writeEnd(promise)
            idleTimer?.apply(idleChange)
        case .writeEndThenRespond(let error):
            writeEnd(promise)
            perform(.respondAndLinger(error), context: context)
        case .writeEndThenLinger:
            flush(context: context, promise: promise, writeEnd: writeEnd) { self.closeLingering(context) }
        case .writeEndThenClose:
            flush(context: context, promise: promise, writeEnd: writeEnd) { context.close(promise: nil) }
        case .none, .start, .deliver, .deliverError, .read, .respondAndClose, .respondAndLinger, .close, .startLingering,
            .lingerTimer, .idleTimer, .park, .upgrade:
            writeEnd(promise)
            perform(action, context: context)
        }
    }

    /// Writes the end and flushes; `then` once it is written.
    private func flush(
        context: ChannelHandlerContext,
        promise: EventLoopPromise<Void>?,
        writeEnd: (EventLoopPromise<Void>?) -> Void,
        then: @escaping () -> Void
    ) {
        let written = context.eventLoop.makePromise(of: Void.self)
        writeEnd(written)
        context.flush()
        written.futureResult.assumeIsolated().whenComplete { result in
            promise?.completeWith(result)
            then()
        }
    }

    /// Closes as nginx's lingering close does: the response is out, so stop sending (FIN), then
    /// read and discard what the client still sends (a body the request was answered without)
    /// until it closes its side or stops sending (``LingerDeadline``). Closing outright with
    /// unread input makes the kernel answer with a reset, which can destroy the response before
    /// the client has read it.
    private func closeLingering(_ context: ChannelHandlerContext) {
        perform(state.lingeringStarts(now: context.eventLoop.now), context: context)
    }

    /// Idle for the idle timeout with nothing outstanding, or for ``ConnectionParking/delay``
    /// first: the machine says whether to close, park or wait on.
    private func idleDeadlinePassed() {
        guard let context else { return }
        let parkable = !readUnderWay && !performing && watcher.allowsParking && context.channel.isActive
        perform(state.idleTimerFired(now: context.eventLoop.now, parkable: parkable), context: context)
    }

    /// Parks the connection (``ConnectionParking``): the watcher holds it until `idleDeadline`,
    /// and the HTTP handlers (NIO's encoder, this one, the endpoints' responder) leave the pipeline.
    private func park(until idleDeadline: NIODeadline?, context: ChannelHandlerContext) {
        guard let parking else { return }
        // Late calls of the last exchange find no handler (nothing holds this one after).
        exchange = nil
        watcher.park(in: parking.lots.lot(on: context.eventLoop, handlers: parking.handlers), idleDeadline: idleDeadline)
        parking.handlers.removeRequestHandlers(from: context.pipeline.syncOperations)
        ReleasedMemory.shared.connectionReleased()
    }

    /// The body stalled: `408` if nothing of its response went out yet, and close.
    private func bodyDeadlinePassed() {
        guard let context, let stall = edge.bodyDeadlinePassed(responseStarted: state.stalledBodyResponseStarted) else { return }
        perform(state.bodyStalled(stall), context: context)
    }

    private func cancelTimers() {
        idleTimer?.cancel()
        bodyTimer?.cancel()
        lingerTimer?.cancel()
    }
}

extension HTTP1ConnectionHandler {
    /// Where the parser's input stands.
    private enum Input {
        case open
        /// The parser refused the bytes: it reads no more.
        case refused(any Error)
        /// The client closed its side (or the connection closed).
        case ended
    }
}

extension HTTP1ConnectionHandler: PassFlushable {
    package func flushAtPassEnd() {
        context?.flush()
    }
}
