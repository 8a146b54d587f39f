import NIOCore
import NIOHTTP1

/// The last handler of a pooled upstream connection: sends a request's parts and hands the
/// response's parts to whoever asks for them, one exchange at a time.
///
/// The channel does not read on its own (`autoRead` is off): the handler reads only while
/// someone waits for a part, so a slow client slows the upstream down through TCP instead of
/// the gateway buffering the body (memory stays flat whatever the body size). Everything here
/// runs on the channel's event loop; ``UpstreamConnection`` is the thread-safe face of it.
final class UpstreamResponseHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPClientResponsePart
    typealias OutboundOut = HTTPClientRequestPart

    let eventLoop: any EventLoop
    private var context: ChannelHandlerContext?
    /// Parts read but not taken yet. Usually a whole small response (head, body, end) arrives
    /// in one read and waits here for the exchange to pick it up without another hop.
    private var buffered = CircularBuffer<HTTPClientResponsePart>(initialCapacity: 4)
    private var waiter: EventLoopPromise<HTTPClientResponsePart>?
    private var waitTimeout: Scheduled<Void>?
    /// Why the connection can no longer be used, once it cannot.
    private var failure: UpstreamError?
    /// Between `send` and the response's end.
    private var inExchange = false
    private var responseEnded = false
    private var keepAlive = true
    /// Whether the current request's end was written (an upstream may answer before that).
    private(set) var requestEnded = false

    /// Whether the connection can carry another request: the last response ended cleanly,
    /// both sides want keep-alive, and nothing failed.
    init(eventLoop: any EventLoop) {
        self.eventLoop = eventLoop
    }

    var isReusable: Bool {
        !inExchange && requestEnded && failure == nil && keepAlive && context?.channel.isActive == true
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.context = nil
    }

    /// Writes a request head (and its end when it has no body) and starts reading the answer.
    func send(_ head: HTTPRequestHead, hasBody: Bool) throws(UpstreamError) {
        guard let context, failure == nil else { throw failure ?? .closed }
        inExchange = true
        responseEnded = false
        keepAlive = head.isKeepAlive
        buffered.removeAll(keepingCapacity: true)
        requestEnded = !hasBody
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        if !hasBody {
            context.write(wrapOutboundOut(.end(nil)), promise: nil)
        }
        context.flush()
    }

    /// Writes one chunk of the request body; the future completes once it left the process,
    /// which is the upload's back-pressure.
    func sendBody(_ chunk: ByteBuffer) -> EventLoopFuture<Void> {
        guard let context, failure == nil else { return eventLoop.makeFailedFuture(failure ?? UpstreamError.closed) }
        return context.writeAndFlush(wrapOutboundOut(.body(.byteBuffer(chunk))))
    }

    func sendEnd() -> EventLoopFuture<Void> {
        guard let context, failure == nil else { return eventLoop.makeFailedFuture(failure ?? UpstreamError.closed) }
        requestEnded = true
        return context.writeAndFlush(wrapOutboundOut(.end(nil)))
    }

    /// A part at once, or the future of one.
    enum NextPart: Sendable {
        case ready(HTTPClientResponsePart)
        case pending(EventLoopFuture<HTTPClientResponsePart>)
    }

    /// The next part of the response, reading if none is buffered. A pending part fails with
    /// ``UpstreamError/timeout`` when nothing arrives within `timeout`.
    func nextPart(timeout: TimeAmount) throws(UpstreamError) -> NextPart {
        if let part = buffered.popFirst() {
            return .ready(part)
        }
        if let failure {
            throw failure
        }
        precondition(waiter == nil, "one reader per upstream connection")
        let promise = eventLoop.makePromise(of: HTTPClientResponsePart.self)
        waiter = promise
        waitTimeout = eventLoop.assumeIsolated().scheduleTask(in: timeout) { [weak self] in
            self?.fail(.timeout)
        }
        context?.read()
        return .pending(promise.futureResult)
    }

    /// The rest of the response when all of it has already been read (its end included), else
    /// nil and nothing taken: lets a small response be answered in one piece, with no more hops.
    func takeIfComplete() -> [HTTPClientResponsePart]? {
        guard let last = buffered.last, case .end = last else { return nil }
        defer { buffered.removeAll(keepingCapacity: true) }
        return Array(buffered)
    }

    /// Gives up on the connection: whatever waits fails with `error` and the socket closes.
    func abort(_ error: UpstreamError) {
        fail(error)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let part = unwrapInboundIn(data)
        guard inExchange else {
            // Bytes while idle in the pool: the upstream is out of step; never reuse it.
            fail(.malformedResponse)
            return
        }
        switch part {
        case .head(let head):
            if !head.isKeepAlive { keepAlive = false }
        case .body:
            break
        case .end:
            responseEnded = true
            inExchange = false
        }
        if let waiter {
            self.waiter = nil
            waitTimeout?.cancel()
            waitTimeout = nil
            waiter.succeed(part)
        } else {
            buffered.append(part)
        }
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        // A read that did not complete a part (a head split across packets): read on.
        if waiter != nil {
            context.read()
        }
        if !inExchange && responseEnded {
            // Idle from now on: keep one read pending so an upstream closing the connection
            // is noticed while it sits in the pool, not when the next request fails on it.
            context.read()
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        fail(.closed)
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        fail(error is HTTPParserError || error is NIOHTTPDecoderError ? .malformedResponse : .closed)
    }

    private func fail(_ error: UpstreamError) {
        if failure == nil { failure = error }
        waitTimeout?.cancel()
        waitTimeout = nil
        if let waiter {
            self.waiter = nil
            waiter.fail(error)
        }
        context?.close(promise: nil)
    }
}
