import GatewayEdge
import NIOCore
import NIOHPACK
import NIOHTTP1
import NIOHTTP2

/// One proxied HTTP/2 stream, driven from the connection's frames by ``HTTP2StreamRouter``
/// instead of a child channel: the ``ProxyDownstream`` its ``ProxyExchange`` answers through.
///
/// The response becomes frames here: the head one HEADERS frame, each body part one DATA frame,
/// and the end sets END_STREAM on the last frame written (no empty DATA frame after it). The
/// last frame is held until the next write or flush for that, never past a flush.
///
/// Flow control both ways, as a child channel has it:
/// - the request body is handed to the exchange as it arrives, or held while the exchange
///   cannot take it (its upstream is slow); the stream's window is opened again (WINDOW_UPDATE,
///   up to ``HTTP2Limits/targetStreamWindow``) only for what the exchange took, so a client
///   cannot send more than that ahead of the upstream (``StreamReceiveWindow``);
/// - NIOHTTP2 holds answer DATA beyond the client's stream and connection windows and completes
///   a write only once its bytes went out; the bytes written and not yet gone count against
///   ``HTTP2Limits/streamOutboundHighWatermark``, so a large answer to a slow client stops the
///   upstream's reading until they go.
///
/// The request body is timed by the same ``RequestEdge`` as a child channel's
/// (``StreamEdgeHandler``): the wait between reads is limited by `server.body_read_timeout`
/// while the gateway asks for more; a stalled body is `408` if no response has started, and the
/// stream is reset.
package final class HTTP2ProxyStream: ProxyDownstream {
    package let id: HTTP2StreamID
    package let eventLoop: any EventLoop
    /// Held strongly: a write's completion or the exchange may still reach the stream after the
    /// connection's handlers are gone (its writes are then dropped). The connection drops its
    /// streams when they close, which ends the cycle.
    private let connection: HTTP2StreamRouter
    /// Kept until the stream closes, so a reset, writability or the body reach it.
    package var exchange: (any ProxiedStreamExchange)?
    /// The exchange has started (``start(memo:)``); body parts wait until then.
    private var started = false
    /// The last frame written, held for the end's END_STREAM.
    private var held: HTTP2Frame.FramePayload?
    /// Body bytes written and not yet gone to the network.
    private var pendingBytes = 0
    /// A response head (not a `1xx`) has been written.
    private var responseStarted = false
    /// END_STREAM or RST_STREAM has been written: nothing more goes out.
    private var responseClosed = false
    /// The stream closed (``HTTP2StreamRouter`` saw it end).
    package private(set) var closed = false

    /// The request's body is still to come (its HEADERS frame did not end the stream).
    package private(set) var requestOpen: Bool
    /// The exchange cannot take body parts now; they wait in `heldParts`.
    private var paused = false
    private var heldParts: [HTTPServerRequestPart] = []
    private var window = StreamReceiveWindow()
    /// The router's edge rules, for this stream's body.
    private var edge: RequestEdge
    /// Made when the body first has to be timed.
    private var bodyTimer: DeadlineTimer?

    package init(id: HTTP2StreamID, requestOpen: Bool, edge: RequestEdge, connection: HTTP2StreamRouter, eventLoop: any EventLoop) {
        self.id = id
        self.requestOpen = requestOpen
        self.connection = connection
        self.eventLoop = eventLoop
        self.edge = edge
    }

    // MARK: ProxyDownstream

    package func writeResponseHead(_ head: ProxyResponseHead) {
        writeResponse(.head(HTTPResponseHead(version: .http1_1, status: head.status, headers: head.headers)))
    }

    package func writeResponseBody(_ chunk: ByteBuffer) {
        writeResponse(.body(.byteBuffer(chunk)))
    }

    /// Writes a part of the response as its frame, held for the end's END_STREAM.
    package func writeResponse(_ part: HTTPServerResponsePart) {
        guard !responseClosed else { return }
        writeHeld()
        switch part {
        case .head(let head):
            if RequestEdge.startsResponse(status: Int(head.status.code)) { responseStarted = true }
            held = .headers(.init(headers: HTTP2ResponseBlock.make(status: head.status, fields: head.headers)))
        case .body(let body):
            pendingBytes += body.readableBytes
            held = .data(.init(data: body))
        case .end(let trailers):
            endResponse(trailers: trailers, closingAfter: false)
        }
    }

    package func endResponse(trailers: HTTPHeaders?, closingAfter: Bool) {
        guard !responseClosed else { return }
        if let trailers, !trailers.isEmpty {
            writeHeld()
            write(.headers(.init(headers: HPACKHeaders(httpHeaders: trailers), endStream: true)))
        } else {
            switch held {
            case .headers(var headers):
                headers.endStream = true
                write(.headers(headers))
            case .data(var data):
                // The last body part goes with the end: it needs no writability accounting.
                pendingBytes -= data.data.readableBytes
                data.endStream = true
                write(.data(data))
            default:
                write(.data(.init(data: .byteBuffer(ByteBuffer()), endStream: true)))
            }
            held = nil
        }
        responseClosed = true
        // A request that cannot be read further (`closingAfter`), or whose body is still
        // coming when its response is complete: the reset tells the client to stop sending it.
        // Flushed first: NIOHTTP2 drops a stream's DATA still waiting in it when a reset follows.
        connection.flush()
        if requestOpen {
            write(.rstStream(closingAfter ? .protocolError : .noError))
            connection.flush()
        }
    }

    package func flushResponse() {
        writeHeld()
        connection.flush()
    }

    package var responseWritable: Bool {
        pendingBytes < HTTP2Limits.streamOutboundHighWatermark && connection.isWritable
    }

    /// Resets this stream only: the connection and its other streams go on.
    package func abortResponse() {
        guard !responseClosed else { return }
        responseClosed = true
        held = nil
        write(.rstStream(.internalError))
        connection.flush()
    }

    package var readUnderWay: Bool { connection.readUnderWay }

    package var upstreamFlushWaitsForPass: Bool { false }

    package func pauseRequestBody() {
        paused = true
    }

    package func resumeRequestBody() {
        guard paused else { return }
        paused = false
        while !paused, !heldParts.isEmpty, let exchange {
            deliver(heldParts.removeFirst(), to: exchange)
        }
        if requestOpen, !paused { askForBody() }
        connection.flush()
    }

    package func exchangeAnswered() {}

    // MARK: From the connection

    /// Starts the exchange at the end of the read that brought the head, and hands it the body
    /// that came with it.
    package func start(memo: inout ProxyEngine.ConnectionMemo) {
        guard let exchange, !started else { return }
        started = true
        exchange.start(memo: &memo)
        while !paused, !heldParts.isEmpty, let exchange = self.exchange {
            deliver(heldParts.removeFirst(), to: exchange)
        }
    }

    /// A frame of this stream from the client.
    package func received(_ payload: HTTP2Frame.FramePayload) {
        let part: HTTPServerRequestPart
        switch payload {
        case .data(let data):
            guard requestOpen, case .byteBuffer(let chunk) = data.data else { return }
            window.received(data.data.readableBytes + (data.paddingBytes.map { $0 + 1 } ?? 0))
            apply(edge.bodyRead())
            if chunk.readableBytes > 0 {
                receivedPart(.body(chunk), flowControlled: chunk.readableBytes)
            }
            guard data.endStream else {
                sendWindowUpdate()
                return
            }
            part = .end(nil)
        case .headers(let trailers) where trailers.endStream && requestOpen:
            part = .end(nil)
        default:
            return
        }
        requestOpen = false
        apply(edge.bodyEnded())
        receivedPart(part, flowControlled: 0)
    }

    private func receivedPart(_ part: HTTPServerRequestPart, flowControlled size: Int) {
        guard started, let exchange, !paused, heldParts.isEmpty else {
            window.held(size)
            heldParts.append(part)
            return
        }
        exchange.requestPart(part)
    }

    private func deliver(_ part: HTTPServerRequestPart, to exchange: any ProxiedStreamExchange) {
        if case .body(let chunk) = part { window.taken(chunk.readableBytes) }
        exchange.requestPart(part)
        sendWindowUpdate()
    }

    /// The connection's read has been handed over: the exchange sends on what it brought, and
    /// a body still open is timed from here while the gateway asks for more.
    package func readComplete() {
        exchange?.clientReadComplete()
        if requestOpen, !paused { askForBody() }
    }

    /// The stream closed: reset by the client, or the connection went.
    package func streamClosed() {
        closed = true
        requestOpen = false
        heldParts = []
        bodyTimer?.cancel()
        let exchange = self.exchange
        self.exchange = nil
        exchange?.clientClosed()
    }

    /// The connection takes writes again.
    package func connectionWritable() {
        if responseWritable { exchange?.clientWritabilityChanged() }
    }

    // MARK: The request body's timing and window

    private func askForBody() {
        if bodyTimer == nil {
            apply(edge.bodyStarted(limit: .betweenReads, now: eventLoop.now))
        } else {
            apply(edge.readRequested(now: eventLoop.now))
        }
    }

    private func apply(_ change: DeadlineTimer.Change) {
        if bodyTimer == nil, case .expire = change {
            bodyTimer = DeadlineTimer(eventLoop: eventLoop) { [weak self] in self?.bodyDeadlinePassed() }
        }
        bodyTimer?.apply(change)
    }

    /// The body stalled: `408` if nothing of the response went out yet, and the stream is reset;
    /// the exchange is over as if the client had gone.
    private func bodyDeadlinePassed() {
        guard !closed, let stall = edge.bodyDeadlinePassed(responseStarted: responseStarted || responseClosed) else { return }
        switch stall {
        case .answer(let error):
            held = nil
            pendingBytes = 0
            let (head, body) = error.channelParts(requestID: RequestID.generate())
            writeResponse(.head(head))
            writeResponse(.body(.byteBuffer(body)))
            endResponse(trailers: nil, closingAfter: false)
        case .close:
            abortResponse()
        }
        let exchange = self.exchange
        self.exchange = nil
        exchange?.clientClosed()
    }

    private func sendWindowUpdate() {
        guard requestOpen, let increment = window.update() else { return }
        write(.windowUpdate(windowSizeIncrement: increment))
    }

    // MARK: Frames

    private func writeHeld() {
        guard let frame = held else { return }
        held = nil
        guard case .data(let data) = frame else {
            write(frame)
            return
        }
        let size = data.data.readableBytes
        let promise = eventLoop.makePromise(of: Void.self)
        promise.futureResult.assumeIsolated().whenComplete { _ in self.sent(size) }
        connection.write(HTTP2Frame(streamID: id, payload: frame), promise: promise)
    }

    private func write(_ payload: HTTP2Frame.FramePayload) {
        connection.write(HTTP2Frame(streamID: id, payload: payload), promise: nil)
    }

    /// Body bytes went out: below the low watermark the exchange may read its upstream again
    /// (it ignores this unless it was waiting).
    private func sent(_ size: Int) {
        pendingBytes -= size
        if pendingBytes <= HTTP2Limits.streamOutboundLowWatermark, connection.isWritable {
            exchange?.clientWritabilityChanged()
        }
    }
}
