import GatewayEdge
import NIOCore
import NIOHTTP1

/// The one handler of a pooled upstream connection (after TLS if any): sends one exchange's
/// request parts as bytes and reads the response with the gateway's parser
/// (``HTTP1ResponseParser``), pushing its parts to the exchange's ``UpstreamResponseSink`` as
/// they are read. Its state and rules are ``UpstreamResponseStateMachine``'s; the handler does
/// what that says.
///
/// The parser runs here, on the bytes of each read, not behind a `ByteToMessageHandler`: a
/// response's parts go straight to the sink, never boxed into the pipeline; only bytes that
/// end mid-part are kept for the next read. After a `101` the parser stops, and the bytes
/// behind it go to the ``WebSocketTunnel`` that takes the connection over (``handOver(to:)``).
///
/// The channel does not read on its own (`autoRead` is off): the handler reads only while its
/// sink wants parts, so a slow client slows the upstream down through TCP instead of the
/// gateway buffering the body (memory stays flat whatever the body size). Everything here
/// runs on the channel's event loop, the loop of the client connection it serves.
package final class UpstreamResponseHandler: ChannelInboundHandler, RemovableChannelHandler {
    package typealias InboundIn = ByteBuffer
    package typealias InboundOut = ByteBuffer
    package typealias OutboundOut = ByteBuffer

    package let eventLoop: any EventLoop
    private var parser = HTTP1ResponseParser()
    /// Bytes of the last read that end mid-part (or follow a `101`), read again with the next.
    private(set) var unread = UnreadBytes()
    /// The upstream sent more than the response it owed, or bytes no response may hold: never
    /// reused, and nothing more is read as HTTP.
    private var isOutOfStep = false
    /// How the current request's body is delimited.
    private var framing = UpstreamRequestFraming.bodiless
    private var context: ChannelHandlerContext?
    /// What the request wrote waits for the loop's pass to end before it is flushed (``PassFlushes``).
    package var passFlushPending = false
    private var state = UpstreamResponseStateMachine()
    /// The exchange parts are pushed to, while the state machine has a reader.
    private var sink: (any UpstreamResponseSink)?
    /// How long the sink may wait without the upstream sending anything: the route timeout
    /// until the response's head, then ``streamIdleTimeout``.
    private var timeout: TimeAmount = .zero
    /// The route's `stream_idle_timeout`: the longest silence once the response has started.
    private var streamIdleTimeout: TimeAmount = .zero
    /// Handed to a ``WebSocketTunnel``: nothing here reads, times or fails any more.
    private var detached = false
    /// Due `timeout` after the request was sent whole or the upstream last sent something;
    /// cleared while the sink is paused (waiting for a slow client does not count). While the
    /// body is still going up it runs only when the upstream stops taking it: a client slow to
    /// send is timed by `server.body_read_timeout` (`408`), not blamed on the upstream.
    private var timeoutTimer: DeadlineTimer?

    package init(eventLoop: any EventLoop) {
        self.eventLoop = eventLoop
    }

    /// An upstream connection's HTTP/1 handler, after TLS if any. Requests are written as bytes
    /// (``UpstreamRequestHead``, ``UpstreamRequestFraming``), so there is no encoder.
    package static func addHandlers(to channel: any Channel) throws {
        try channel.pipeline.syncOperations.addHandler(UpstreamResponseHandler(eventLoop: channel.eventLoop))
    }

    /// Whether the connection can carry another request: the last response ended cleanly,
    /// both sides want keep-alive, nothing failed, the upstream sent nothing it did not owe,
    /// and it is still open.
    package var isReusable: Bool {
        state.canCarryAnotherRequest && !isOutOfStep && context?.channel.isActive == true
    }

    /// Whether the current request's end was written (an upstream may answer before that).
    package var requestEnded: Bool { state.requestEnded }

    /// Whether request body chunks can be written without piling up in the gateway.
    package var isWritable: Bool {
        context?.channel.isWritable ?? false
    }

    package func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        // A strong reference, let go of when the timer is cancelled (``DeadlineTimer``).
        timeoutTimer = DeadlineTimer(eventLoop: eventLoop) {
            self.fail(.timeout)
        }
    }

    package func handlerRemoved(context: ChannelHandlerContext) {
        timeoutTimer?.cancel()
        flushIfPending(context)
        self.context = nil
    }

    // MARK: Sending

    /// Writes a request head (which is the whole request when it has no body) and hands the
    /// response to `sink`, which may have to wait at most `timeout` for each part, counted from
    /// the request's end (Envoy's rule). A head with a body is flushed with the body
    /// (``flush()``), so a small upload leaves in one write; a bodiless one is flushed at the
    /// end of the loop's pass (``PassFlushes``).
    package func send(
        _ head: UpstreamRequestHead, to sink: any UpstreamResponseSink, timeout: TimeAmount, streamIdleTimeout: TimeAmount? = nil
    ) throws(UpstreamError) {
        guard let context else { throw state.failure ?? .closed }
        // The gateway's heads never carry `Connection` (hop-by-hop, ``ForwardedHeaders``): an
        // HTTP/1.1 request without it keeps the connection.
        try state.requestSent(keepAlive: true, hasBody: head.hasBody)
        parser.expectResponse(to: head.method)
        framing = head.framing
        context.write(wrapOutboundOut(head.bytes), promise: nil)
        if !head.hasBody { PassFlushes.flush(self, on: context.eventLoop) }
        self.sink = sink
        self.timeout = timeout
        self.streamIdleTimeout = streamIdleTimeout ?? timeout
        if !head.hasBody { timeoutTimer?.expire(in: timeout) }
        context.read()
    }

    /// Writes one chunk of the request body, flushed by the next ``flush()`` or the end. The
    /// caller stops reading its client while ``isWritable`` is false and resumes at
    /// ``UpstreamResponseSink/upstreamWritabilityChanged()``.
    package func sendBody(_ chunk: ByteBuffer) {
        guard let context, state.failure == nil else { return }
        framing.frame(chunk, allocator: context.channel.allocator) { bytes in
            context.write(wrapOutboundOut(bytes), promise: nil)
        }
    }

    /// Sends what the request has written so far: once per read from the client, not per
    /// part, at the end of the loop's pass (``PassFlushes``).
    package func flush() {
        guard let context else { return }
        PassFlushes.flush(self, on: context.eventLoop)
    }

    package func sendEnd() {
        guard let context, state.failure == nil else { return }
        state.requestBodyEnded()
        if state.readerIsWaiting { timeoutTimer?.expire(in: timeout) }
        if let end = framing.end { context.write(wrapOutboundOut(end), promise: nil) }
        PassFlushes.flush(self, on: context.eventLoop)
    }

    // MARK: Reading

    /// Reads on after the sink paused (its client has taken what was written).
    package func resume() {
        guard state.readerResumed() else { return }
        timeoutTimer?.expire(in: timeout)
        drain()
    }

    /// Does what the state machine says until the sink pauses or waits for the upstream.
    private func drain() {
        while true {
            switch state.next() {
            case .push(let part):
                if push(part) { return }
            case .read:
                context?.read()
                return
            case .fail(let error):
                let sink = self.sink
                self.sink = nil
                sink?.upstreamFailed(error)
                return
            case .wait:
                return
            }
        }
    }

    /// Gives `part` to the sink; returns true when that was the end (the sink is then
    /// detached, and may already have started the connection's next exchange, so nothing may
    /// be touched).
    private func push(_ part: UpstreamResponsePart) -> Bool {
        guard let sink else { return true }
        // The response has started: from now on a silence is timed as a stream's.
        if case .head = part { timeout = streamIdleTimeout }
        if case .end = part {
            self.sink = nil
            timeoutTimer?.set(nil)
            _ = sink.upstreamPart(part)
            return true
        }
        if !sink.upstreamPart(part), self.sink === sink {
            state.readerPaused()
            timeoutTimer?.set(nil)
        }
        return false
    }

    // MARK: Upgrade

    /// The connection is leaving the pool for a ``WebSocketTunnel`` (its `101` was pushed):
    /// no sink, no timer, no reads of its own from now on.
    package func detach() {
        detached = true
        sink = nil
        timeoutTimer?.cancel()
    }

    /// Puts `tunnel` where this handler was: the bytes read behind the `101` reach it first.
    package func handOver(to tunnel: WebSocketTunnelHandler) throws {
        guard let context else { throw UpstreamError.closed }
        let pipeline = context.pipeline.syncOperations
        try pipeline.addHandler(tunnel)
        if let behind = unread.take() {
            context.fireChannelRead(wrapInboundOut(behind))
        }
        try pipeline.removeHandler(self)
    }

    // MARK: Failure

    /// Gives up on the connection: the socket closes. The sink is detached first: whoever
    /// aborts already knows.
    package func abort(_ error: UpstreamError) {
        sink = nil
        state.aborted(error)
        fail(error)
    }

    private func fail(_ error: UpstreamError) {
        timeoutTimer?.cancel()
        if state.failed(error), let sink {
            self.sink = nil
            sink.upstreamFailed(error)
        }
        context?.close(promise: nil)
    }

    // MARK: Channel events

    package func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !isOutOfStep else { return }
        var bytes = unread.take(appending: unwrapInboundIn(data))
        do {
            while let part = try parser.next(&bytes) {
                try hand(part, unread: bytes)
                // A response's end may take no bytes of its own (a bodiless head, a body's
                // last byte): it goes with the part before it.
                if parser.endsNext, let end = try parser.next(&bytes) { try hand(end, unread: bytes) }
            }
        } catch {
            isOutOfStep = true
            fail(.malformedResponse)
            return
        }
        unread.keep(bytes)
    }

    /// Hands `part` to the state machine. Bytes behind a response's end in what was read with
    /// it answer a request the gateway had not sent (it never pipelines): the upstream is out
    /// of step. The connection is marked so before the end is handed on (the pool does not keep
    /// it, so no request goes out on it), and fails right after, before anyone could read those
    /// bytes as an answer.
    private func hand(_ part: UpstreamResponsePart, unread: ByteBuffer) throws(UpstreamError) {
        guard case .end = part, HTTP1ResponseParser.holdsMoreThanEmptyLines(unread) else { return partRead(part) }
        isOutOfStep = true
        partRead(part)
        throw .malformedResponse
    }

    private func partRead(_ part: UpstreamResponsePart) {
        if detached { return }
        switch state.partRead(part) {
        case .push(let part):
            _ = push(part)
        case .fail(let error):
            // Bytes while idle in the pool: the upstream is out of step; never reuse it.
            fail(error)
        case .read, .wait:
            break
        }
    }

    package func channelReadComplete(context: ChannelHandlerContext) {
        if detached { return }
        if state.readerIsWaiting {
            timeoutTimer?.expire(in: timeout)
            // A read that did not complete a part (a head split across packets): read on.
            context.read()
        }
        sink?.upstreamReadComplete()
        if state.isIdleAfterAResponse {
            // Idle from now on: keep one read pending so an upstream closing the connection
            // is noticed while it sits in the pool, not when the next request fails on it.
            context.read()
        }
    }

    package func channelWritabilityChanged(context: ChannelHandlerContext) {
        // Mid-body, an upstream that stops taking the body is the one late.
        if !state.requestEnded && state.readerIsWaiting {
            if context.channel.isWritable { timeoutTimer?.set(nil) } else { timeoutTimer?.expire(in: timeout) }
        }
        sink?.upstreamWritabilityChanged()
        context.fireChannelWritabilityChanged()
    }

    package func channelInactive(context: ChannelHandlerContext) {
        if !detached && !isOutOfStep { inputEnded() }
        if !detached { fail(.closed) }
        context.fireChannelInactive()
    }

    /// The upstream closed: the end of a body read until the close, or an error if a response
    /// was under way.
    private func inputEnded() {
        do {
            if let end = try parser.inputEnded(unread: unread.held ?? ByteBuffer()) { partRead(end) }
        } catch {
            fail(.malformedResponse)
        }
    }

    package func errorCaught(context: ChannelHandlerContext, error: any Error) {
        if detached {
            context.close(promise: nil)
            return
        }
        fail(.closed)
    }
}

extension UpstreamResponseHandler: PassFlushable {
    package func flushAtPassEnd() {
        context?.flush()
    }
}
