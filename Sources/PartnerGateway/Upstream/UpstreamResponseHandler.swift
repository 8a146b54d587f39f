import NIOCore
import NIOHTTP1

/// The last handler of a pooled upstream connection: sends one exchange's request parts and
/// pushes the response's parts to its ``UpstreamResponseSink`` as they are read.
///
/// The channel does not read on its own (`autoRead` is off): the handler reads only while its
/// sink wants parts, so a slow client slows the upstream down through TCP instead of the
/// gateway buffering the body (memory stays flat whatever the body size). Everything here
/// runs on the channel's event loop, the loop of the client connection it serves.
final class UpstreamResponseHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPClientResponsePart
    typealias OutboundOut = HTTPClientRequestPart

    let eventLoop: any EventLoop
    private var context: ChannelHandlerContext?
    /// Parts read but not taken yet. Usually a whole small response (head, body, end) arrives
    /// in one read and is pushed at once; parts wait here only while the sink is paused.
    private var buffered = CircularBuffer<HTTPClientResponsePart>(initialCapacity: 4)
    /// The reader parts are pushed to, and whether it asked for a pause.
    private var sink: (any UpstreamResponseSink)?
    private var sinkPaused = false
    /// How long the sink may wait without the upstream sending anything (the route timeout).
    private var timeout: TimeAmount = .zero
    /// Due `timeout` after the sink started waiting or the upstream last sent something;
    /// cleared while the sink is paused (waiting for a slow client does not count).
    private var timeoutTimer: DeadlineTimer?
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

    /// Whether request body chunks can be written without piling up in the gateway.
    var isWritable: Bool {
        context?.channel.isWritable ?? false
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        timeoutTimer = DeadlineTimer(eventLoop: eventLoop) { [weak self] in
            self?.fail(.timeout)
        }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        timeoutTimer?.cancel()
        self.context = nil
    }

    // MARK: Sending

    /// Writes a request head (and its end when it has no body) and hands the response to
    /// `sink`, which may have to wait at most `timeout` for each part. A head with a body is
    /// flushed with the body (``flush()``), so a small upload leaves in one write.
    func send(_ head: HTTPRequestHead, hasBody: Bool, to sink: any UpstreamResponseSink, timeout: TimeAmount) throws(UpstreamError) {
        guard let context, failure == nil else { throw failure ?? .closed }
        precondition(self.sink == nil, "one exchange per upstream connection")
        inExchange = true
        responseEnded = false
        keepAlive = head.isKeepAlive
        buffered.removeAll(keepingCapacity: true)
        requestEnded = !hasBody
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        if !hasBody {
            context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
        }
        self.sink = sink
        sinkPaused = false
        self.timeout = timeout
        timeoutTimer?.expire(in: timeout)
        context.read()
    }

    /// Writes one chunk of the request body, flushed by the next ``flush()`` or the end. The
    /// caller stops reading its client while ``isWritable`` is false and resumes at
    /// ``UpstreamResponseSink/upstreamWritabilityChanged()``.
    func sendBody(_ chunk: ByteBuffer) {
        guard let context, failure == nil else { return }
        context.write(wrapOutboundOut(.body(.byteBuffer(chunk))), promise: nil)
    }

    /// Sends what the request has written so far: once per read from the client, not per
    /// part.
    func flush() {
        context?.flush()
    }

    func sendEnd() {
        guard let context, failure == nil else { return }
        requestEnded = true
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
    }

    // MARK: Reading

    /// Reads on after the sink paused (its client has taken what was written).
    func resume() {
        guard sink != nil, sinkPaused else { return }
        sinkPaused = false
        timeoutTimer?.expire(in: timeout)
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
            timeoutTimer?.set(nil)
            _ = sink.upstreamPart(part)
            return true
        }
        if !sink.upstreamPart(part), self.sink === sink {
            sinkPaused = true
            timeoutTimer?.set(nil)
        }
        return false
    }

    // MARK: Failure

    /// Gives up on the connection: the socket closes. The sink is detached first: whoever
    /// aborts already knows.
    func abort(_ error: UpstreamError) {
        sink = nil
        fail(error)
    }

    private func fail(_ error: UpstreamError) {
        if failure == nil { failure = error }
        timeoutTimer?.cancel()
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
        if let sink, !sinkPaused, buffered.isEmpty {
            _ = push(part, to: sink)
        } else {
            buffered.append(part)
        }
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        if sink != nil && !sinkPaused {
            timeoutTimer?.expire(in: timeout)
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

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        sink?.upstreamWritabilityChanged()
        context.fireChannelWritabilityChanged()
    }

    func channelInactive(context: ChannelHandlerContext) {
        fail(.closed)
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        fail(error is HTTPParserError || error is NIOHTTPDecoderError ? .malformedResponse : .closed)
    }
}
