import GatewayEdge
import NIOCore
import NIOHTTP1
import NIOHTTP2

/// Routes the streams of one HTTP/2 connection: those a route takes it drives from the frames,
/// the rest it passes on. It sits between
/// `NIOHTTP2Handler` and the `HTTP2StreamMultiplexer` (``GatewayTLSChannel``): a stream whose
/// request a route takes is answered here by a ``ProxyExchange`` through an
/// ``HTTP2ProxyStream``, with no child channel, pipeline or HTTP/1 codec of its own; every
/// other stream (the gateway's own endpoints, requests the edge rules refuse) goes on, frames
/// and all, to the multiplexer and gets a child channel (``HTTP2StreamSetup``).
///
/// Why: a child channel per stream (its pipeline of four or five handlers added and removed,
/// activation promises, the HTTP/1 conversion both ways) would cost more than the proxying itself
/// (docs/DECISIONS.md, "HTTP/2: proxied streams without child channels").
///
/// Which streams are owned: a new stream whose head passes the same ``RequestEdge`` as a child
/// channel's (``StreamEdgeHandler``: the header limit, ``RequestHeadRules``) and that the
/// engine routes. A head that fails them goes to the multiplexer, whose ``StreamEdgeHandler``
/// answers it in the error shape, so each refusal stays in one place.
///
/// An owned stream's frames and window changes never reach the multiplexer (it would take
/// them for a stream it never saw); its other events do: the multiplexer ignores events of
/// streams it does not know, and `NIOHTTP2ServerConnectionManagementHandler` after it counts
/// owned streams opening and closing like any other, for idle connections and graceful
/// shutdown. NIOHTTP2Handler itself still enforces `SETTINGS_MAX_CONCURRENT_STREAMS`, flow
/// control and the stream states.
///
/// Every HEADERS frame passes here first, so every header block is checked here, in the pass
/// that lays the request out (``HTTP2RequestHead``, ``HTTP2FieldRules``; NIOHTTP2's own check
/// is off): a malformed one resets its stream, owned or not.
///
/// An owned stream's exchange starts when the read that brought its head completes, not at
/// the head: a stream the client reset in the same read (rapid reset: HEADERS and RST_STREAM
/// sent together) is over before it costs admission or an upstream connection.
///
/// The idle timeout (`server.idle_timeout`) is timed here, not by the connection manager: its
/// timer is cancelled at every stream's opening, and NIO finds a cancelled task by scanning every
/// task the loop has scheduled. Here a stream opening only clears a deadline
/// (``DeadlineTimer``); an idle connection is handed to the manager as a quiesce event, which it
/// answers as it would its own idle timeout (GOAWAY, PING, close once no stream is open).
///
/// A connection that was sent GOAWAY (idle, or the gateway shutting down) closes
/// ``HTTP2Limits/goAwayGrace`` after its last stream ended, even if the client never
/// acknowledged the GOAWAY's PING, which is all NIOHTTP2's connection manager waits for.
///
/// The client's TLS close_notify closes the connection at once (its TCP FIN is
/// ``HTTP2ClientCloseHandler``'s): HTTP/2 has no half-closed connection, and the listener
/// allows remote half-closure for HTTP/1.1's sake.
package final class HTTP2StreamRouter: ChannelDuplexHandler, RemovableChannelHandler {
    package typealias InboundIn = HTTP2Frame
    package typealias InboundOut = HTTP2Frame
    package typealias OutboundIn = HTTP2Frame
    package typealias OutboundOut = HTTP2Frame

    /// The proxy engine (the forward authorizer on the authorization listener); nil on the admin
    /// listener, where the handler only keeps the stream events in order for the connection manager.
    private let source: (any ProxiedRequestSource)?
    /// The edge rules (`server.max_header_bytes`, `server.body_read_timeout`): a head they
    /// refuse goes to the multiplexer for its response; each owned stream times its body with a
    /// copy.
    private let edge: RequestEdge
    private var streams: [HTTP2StreamID: HTTP2ProxyStream] = [:]
    /// Every open stream, owned or not, as NIOHTTP2Handler announced it.
    private var openStreams = Set<HTTP2StreamID>()
    /// The newest stream the client opened: a HEADERS frame above it opens a stream, one at or
    /// below it is the trailers of a stream the multiplexer has.
    private var newestStream = HTTP2StreamID.rootStream
    private var memo = ProxyEngine.ConnectionMemo()
    /// Owned streams that had frames in the current read.
    private var streamsRead: [HTTP2ProxyStream] = []
    /// Owned streams whose heads came in the current read: their exchanges start at its end.
    private var streamsToStart: [HTTP2ProxyStream] = []
    private var context: ChannelHandlerContext?
    /// Between a read from the client and its read-complete event.
    package private(set) var readUnderWay = false
    /// A GOAWAY has been sent: once no stream is open, the connection closes after a grace.
    private var goingAway = false
    /// The listener drains: owned streams' exchanges are told (event streams end).
    private var draining = false
    private var goAwayTimer: DeadlineTimer?
    /// `server.idle_timeout`; nil when idle connections stay (tests without a manager).
    private let idleTimeout: TimeAmount?
    /// Runs while no stream is open and the connection has not been sent GOAWAY.
    private var idleTimer: DeadlineTimer?
    /// Header blocks refused as malformed on this connection.
    private var malformedBlocks = 0
    /// Streams' writes wait for the end of the loop's pass (``PassFlushes``).
    package var passFlushPending = false

    package init(
        source: (any ProxiedRequestSource)?, maxHeaderBytes: Int, bodyReadTimeout: TimeAmount, idleTimeout: TimeAmount?, anchoredPrefix: String? = nil
    ) {
        self.source = source
        edge = RequestEdge(maxHeaderListSize: maxHeaderBytes, bodyReadTimeout: bodyReadTimeout, anchoredPrefix: anchoredPrefix)
        self.idleTimeout = idleTimeout
    }

    package func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        if let idleTimeout {
            idleTimer = DeadlineTimer(eventLoop: context.eventLoop) { [unowned self] in self.idleTimedOut() }
            idleTimer?.expire(in: idleTimeout)
        }
    }

    package func handlerRemoved(context: ChannelHandlerContext) {
        goAwayTimer?.cancel()
        idleTimer?.cancel()
        flushIfPending(context)
        self.context = nil
    }

    package func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if !goingAway, case .goAway = unwrapOutboundIn(data).payload {
            goingAway = true
            closeOnceQuiet(context: context)
        }
        context.write(data, promise: promise)
    }

    /// No stream opened within the idle timeout: the connection manager sends GOAWAY.
    private func idleTimedOut() {
        guard openStreams.isEmpty, !goingAway, let context else { return }
        context.fireUserInboundEventTriggered(ChannelShouldQuiesceEvent())
    }

    /// After a GOAWAY, with no stream open: closes after the grace unless one opens meanwhile.
    private func closeOnceQuiet(context: ChannelHandlerContext) {
        guard goingAway, openStreams.isEmpty else { return }
        if goAwayTimer == nil {
            goAwayTimer = DeadlineTimer(eventLoop: context.eventLoop) { [unowned self] in
                if self.openStreams.isEmpty { self.context?.close(promise: nil) }
            }
        }
        goAwayTimer?.expire(in: HTTP2Limits.goAwayGrace)
    }

    package func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        readUnderWay = true
        let frame = unwrapInboundIn(data)
        // A HEADERS frame opens a stream above the newest, or carries the trailers of one.
        if case .headers(let headers) = frame.payload {
            if frame.streamID > newestStream {
                newestStream = frame.streamID
                switch HTTP2RequestHead.read(headers.headers, endStream: headers.endStream, allocator: context.channel.allocator) {
                case .head(let head):
                    if owns(frame.streamID, head: head, endStream: headers.endStream, context: context) { return }
                case .passOn:
                    break
                case .malformed:
                    return refuseMalformed(frame.streamID, context: context)
                }
            } else if !HTTP2FieldRules.areValidTrailers(headers.headers) {
                return refuseMalformed(frame.streamID, context: context)
            }
        }
        if let stream = streams[frame.streamID] {
            // DATA and trailers go to the exchange; what else comes for the stream
            // (WINDOW_UPDATE, PRIORITY, RST_STREAM) NIOHTTP2Handler has acted on already.
            stream.received(frame.payload)
            read(stream)
            return
        }
        context.fireChannelRead(data)
    }

    /// A malformed header block (RFC 9113 §8.1.1), owned stream or not: the stream is reset with
    /// `PROTOCOL_ERROR`, as NIOHTTP2's own validation (off, ``HTTP2Limits``) would. Like its
    /// glitch limit, a connection that sends ``HTTP2Limits/maxMalformedBlocks`` of them is
    /// closed with GOAWAY `ENHANCE_YOUR_CALM`.
    private func refuseMalformed(_ id: HTTP2StreamID, context: ChannelHandlerContext) {
        malformedBlocks += 1
        guard malformedBlocks < HTTP2Limits.maxMalformedBlocks else {
            let goAway = HTTP2Frame(streamID: .rootStream, payload: .goAway(lastStreamID: newestStream, errorCode: .enhanceYourCalm, opaqueData: nil))
            context.writeAndFlush(wrapOutboundOut(goAway)).assumeIsolated().whenComplete { _ in context.close(promise: nil) }
            return
        }
        context.writeAndFlush(wrapOutboundOut(HTTP2Frame(streamID: id, payload: .rstStream(.protocolError))), promise: nil)
    }

    /// Starts the stream's exchange when a route takes its request; false to pass it on.
    private func owns(_ id: HTTP2StreamID, head received: ClientRequestHead, endStream: Bool, context: ChannelHandlerContext) -> Bool {
        guard let source, case .success(let head) = edge.admit(received) else { return false }
        memo.notePeer(of: context.channel)
        let stream = HTTP2ProxyStream(
            id: id, requestOpen: !endStream, edge: edge, connection: self, eventLoop: context.eventLoop
        )
        guard let exchange = source.makeExchange(for: head, answeringThrough: stream, memo: &memo, on: context.eventLoop) else {
            return false
        }
        streams[id] = stream
        stream.exchange = exchange
        if draining { exchange.drain() }
        streamsToStart.append(stream)
        if !endStream { read(stream) }
        return true
    }

    private func read(_ stream: HTTP2ProxyStream) {
        if !streamsRead.contains(where: { $0 === stream }) { streamsRead.append(stream) }
    }

    package func channelReadComplete(context: ChannelHandlerContext) {
        if !streamsToStart.isEmpty {
            // Still inside the read for them: a head and the body that came with it go
            // upstream in one write, at the streams' read-complete below.
            let starting = streamsToStart
            streamsToStart = []
            for stream in starting where !stream.closed { stream.start(memo: &memo) }
        }
        readUnderWay = false
        if !streamsRead.isEmpty {
            let read = streamsRead
            streamsRead = []
            for stream in read where !stream.closed { stream.readComplete() }
        }
        context.fireChannelReadComplete()
    }

    package func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        // The stream events by their type first: a cast that fails costs a call into the
        // runtime, and every stream brings several of these events.
        let eventType = ObjectIdentifier(type(of: event))
        if eventType == ObjectIdentifier(NIOHTTP2WindowUpdatedEvent.self) {
            // Only the multiplexer's child channels heed a stream's window; an owned stream has none.
            if streams[(event as! NIOHTTP2WindowUpdatedEvent).streamID] != nil { return }
        } else if eventType == ObjectIdentifier(NIOHTTP2StreamCreatedEvent.self) {
            openStreams.insert((event as! NIOHTTP2StreamCreatedEvent).streamID)
            idleTimer?.set(nil)
        } else if eventType == ObjectIdentifier(StreamClosedEvent.self) {
            // A stream NIOHTTP2Handler refused with its head (a `content-length` it cannot read)
            // is reset without ever having opened: the connection manager, which counts
            // streams, must not see it close.
            let id = (event as! StreamClosedEvent).streamID
            guard openStreams.remove(id) != nil else { return }
            streams.removeValue(forKey: id)?.streamClosed()
            if openStreams.isEmpty, !goingAway, let idleTimeout { idleTimer?.expire(in: idleTimeout) }
            closeOnceQuiet(context: context)
        } else if case ChannelEvent.inputClosed = event {
            context.close(promise: nil)
        } else if event is ChannelShouldQuiesceEvent {
            // The connection manager after this sends GOAWAY and waits for the open streams.
            draining = true
            for stream in streams.values { stream.exchange?.drain() }
        }
        context.fireUserInboundEventTriggered(event)
    }

    package func channelWritabilityChanged(context: ChannelHandlerContext) {
        if context.channel.isWritable {
            for stream in streams.values { stream.connectionWritable() }
        }
        context.fireChannelWritabilityChanged()
    }

    package func channelInactive(context: ChannelHandlerContext) {
        let open = streams.values
        streams = [:]
        streamsToStart = []
        goAwayTimer?.cancel()
        idleTimer?.cancel()
        for stream in open { stream.streamClosed() }
        context.fireChannelInactive()
    }

    // MARK: For the streams

    package var isWritable: Bool { context?.channel.isWritable ?? false }

    package func write(_ frame: HTTP2Frame, promise: EventLoopPromise<Void>?) {
        guard let context else {
            promise?.fail(ChannelError.ioOnClosedChannel)
            return
        }
        context.write(wrapOutboundOut(frame), promise: promise)
    }

    /// Sends the streams' writes at the end of the loop's pass (``PassFlushes``): the answers
    /// that end in one pass go through NIOHTTP2Handler's flush once, not once a stream.
    package func flush() {
        guard let context else { return }
        PassFlushes.flush(self, on: context.eventLoop)
    }

    /// Sends the streams' writes now: before a reset, which would drop a stream's DATA still
    /// unflushed in NIOHTTP2Handler.
    package func flushNow() {
        passFlushPending = false
        context?.flush()
    }
}

extension HTTP2StreamRouter: PassFlushable {
    package func flushAtPassEnd() {
        context?.flush()
    }
}
