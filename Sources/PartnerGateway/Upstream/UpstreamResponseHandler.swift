import NIOCore
import NIOHTTP1

/// The last handler of a pooled upstream connection: sends a request's parts and hands the
/// response's parts to its reader, one exchange at a time. The reader either asks for each
/// part (``nextPart(timeout:)``, the async path through Hummingbird) or has every part pushed
/// to it as it is read (``stream(to:timeout:)``, the event-loop fast path).
///
/// The channel does not read on its own (`autoRead` is off): the handler reads only while its
/// reader wants a part, so a slow client slows the upstream down through TCP instead of the
/// gateway buffering the body (memory stays flat whatever the body size). Everything here
/// runs on the channel's event loop; ``UpstreamConnection`` is the thread-safe face of it.
final class UpstreamResponseHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPClientResponsePart
    typealias OutboundOut = HTTPClientRequestPart

    let eventLoop: any EventLoop
    private var context: ChannelHandlerContext?
    /// Parts read but not taken yet. Usually a whole small response (head, body, end) arrives
    /// in one read and waits here for the exchange to pick it up without another hop.
    private var buffered = CircularBuffer<HTTPClientResponsePart>(initialCapacity: 4)
    /// The reader waiting for the next part (the async path).
    private var waiter: EventLoopPromise<HTTPClientResponsePart>?
    /// The reader parts are pushed to (the fast path), and whether it asked for a pause.
    private var sink: (any UpstreamResponseSink)?
    private var sinkPaused = false
    /// How long a waiting reader may go without the upstream sending anything.
    private var timeout: TimeAmount = .zero
    /// When the reader started waiting or the upstream last sent something.
    private var lastProgress = NIODeadline.uptimeNanoseconds(0)
    /// Armed lazily and re-armed only when it fires early: a timer per response (set, then
    /// cancelled a moment later) cost more than the forwarding around it.
    private var timeoutTimer: Scheduled<Void>?
    private var timerDeadline = NIODeadline.uptimeNanoseconds(0)
    /// Why the connection can no longer be used, once it cannot.
    private var failure: UpstreamError?
    /// Between `send` and the response's end.
    private var inExchange = false
    private var responseEnded = false
    private var keepAlive = true
    /// Whether the current request's end was written (an upstream may answer before that).
    private(set) var requestEnded = false

    init(eventLoop: any EventLoop) {
        self.eventLoop = eventLoop
    }

    /// Whether the connection can carry another request: the last response ended cleanly,
    /// both sides want keep-alive, and nothing failed.
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

    // MARK: Reading, one part at a time (async path)

    /// A part at once, or the future of one.
    enum NextPart: Sendable {
        case ready(HTTPClientResponsePart)
        case pending(EventLoopFuture<HTTPClientResponsePart>)
    }

    /// The next part of the response, reading if none is buffered. A pending part fails with
    /// ``UpstreamError/timeout`` when the upstream sends nothing within `timeout`.
    func nextPart(timeout: TimeAmount) throws(UpstreamError) -> NextPart {
        if let part = buffered.popFirst() {
            return .ready(part)
        }
        if let failure {
            throw failure
        }
        precondition(waiter == nil && sink == nil, "one reader per upstream connection")
        let promise = eventLoop.makePromise(of: HTTPClientResponsePart.self)
        waiter = promise
        startWaiting(timeout: timeout)
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

    // MARK: Reading, every part pushed (fast path)

    /// Hands the response to `sink`: what is already read at once, the rest as it arrives.
    func stream(to sink: any UpstreamResponseSink, timeout: TimeAmount) {
        precondition(waiter == nil && self.sink == nil, "one reader per upstream connection")
        self.sink = sink
        sinkPaused = false
        startWaiting(timeout: timeout)
        drain()
    }

    /// Reads on after the sink paused (its client has taken what was written).
    func resume() {
        guard sink != nil, sinkPaused else { return }
        sinkPaused = false
        lastProgress = .now()
        drain()
    }

    /// Pushes buffered parts to the sink until it pauses or none are left, then reads for more
    /// (or reports the failure that ended the connection after them).
    private func drain() {
        while let sink, !sinkPaused {
            guard let part = buffered.popFirst() else {
                if let failure {
                    self.sink = nil
                    sink.upstreamFailed(failure)
                } else {
                    context?.read()
                }
                return
            }
            if push(part, to: sink) { return }
        }
    }

    /// Gives `part` to `sink`; returns true when that was the end (the sink is then detached,
    /// and may already have started the connection's next exchange, so nothing may be touched).
    private func push(_ part: HTTPClientResponsePart, to sink: any UpstreamResponseSink) -> Bool {
        if case .end = part {
            self.sink = nil
            _ = sink.upstreamPart(part)
            return true
        }
        if !sink.upstreamPart(part), self.sink === sink {
            sinkPaused = true
        }
        return false
    }

    // MARK: Failure and timeout

    /// Gives up on the connection: the socket closes and a waiting reader fails with `error`.
    /// A sink is detached first: whoever aborts already knows.
    func abort(_ error: UpstreamError) {
        sink = nil
        fail(error)
    }

    private func startWaiting(timeout: TimeAmount) {
        self.timeout = timeout
        lastProgress = .now()
        let due = lastProgress + timeout
        // Routes sharing an upstream may have different timeouts: a timer armed for a
        // longer one is brought forward.
        if timeoutTimer == nil || timerDeadline > due {
            timeoutTimer?.cancel()
            armTimeout(at: due)
        }
    }

    private var readerIsWaiting: Bool {
        waiter != nil || (sink != nil && !sinkPaused)
    }

    private func armTimeout(at deadline: NIODeadline) {
        timerDeadline = deadline
        timeoutTimer = eventLoop.assumeIsolated().scheduleTask(deadline: deadline) { [weak self] in
            guard let self else { return }
            self.timeoutTimer = nil
            guard self.readerIsWaiting, self.failure == nil else { return }
            let due = self.lastProgress + self.timeout
            if NIODeadline.now() >= due {
                self.fail(.timeout)
            } else {
                self.armTimeout(at: due)
            }
        }
    }

    private func fail(_ error: UpstreamError) {
        if failure == nil { failure = error }
        timeoutTimer?.cancel()
        timeoutTimer = nil
        if let waiter {
            self.waiter = nil
            waiter.fail(error)
        }
        if let sink, !sinkPaused {
            // Nothing buffered is left behind: a sink that is not paused has taken it all.
            self.sink = nil
            sink.upstreamFailed(error)
        }
        context?.close(promise: nil)
    }

    // MARK: Channel events

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
            waiter.succeed(part)
        } else if let sink, !sinkPaused, buffered.isEmpty {
            _ = push(part, to: sink)
        } else {
            buffered.append(part)
        }
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        if readerIsWaiting {
            lastProgress = .now()
            // A read that did not complete a part (a head split across packets): read on.
            context.read()
        }
        if let sink, buffered.isEmpty {
            sink.upstreamReadComplete()
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
}
