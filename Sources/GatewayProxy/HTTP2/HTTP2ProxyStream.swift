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
///
/// What happens when is decided by its ``StateMachine``; the stream performs its actions: it
/// writes frames, calls the exchange and keeps the body's timer.
package final class HTTP2ProxyStream: ProxyDownstream {
    package let id: HTTP2StreamID
    package let eventLoop: any EventLoop
    /// Held strongly: a write's completion or the exchange may still reach the stream after the
    /// connection's handlers are gone (its writes are then dropped). The connection drops its
    /// streams when they close, which ends the cycle.
    private let connection: HTTP2StreamRouter
    /// Kept until the stream closes, so a reset, writability or the body reach it.
    package var exchange: (any ProxiedRequestExchange)?
    private var machine: StateMachine
    /// Made when the body first has to be timed.
    private var bodyTimer: DeadlineTimer?

    package init(id: HTTP2StreamID, requestOpen: Bool, edge: RequestEdge, connection: HTTP2StreamRouter, eventLoop: any EventLoop) {
        self.id = id
        self.connection = connection
        self.eventLoop = eventLoop
        machine = StateMachine(requestOpen: requestOpen, edge: edge)
    }

    /// The stream closed, or its stalled body ended it: the router starts and reads it no more.
    package var closed: Bool { machine.isClosed }

    // MARK: ProxyDownstream

    package func writeResponseHead(_ head: ProxyResponseHead) {
        let block = head.headerBlock()
        perform(machine.responseHead(status: Int(head.status.code), block: block))
    }

    package func writeResponseBody(_ chunk: ByteBuffer) {
        perform(machine.responseBody(chunk))
    }

    /// Writes a part of the response as its frame, held for the end's END_STREAM.
    package func writeResponse(_ part: HTTPServerResponsePart) {
        switch part {
        case .head(let head):
            let block = HTTP2ResponseBlock.make(status: head.status, fields: head.headers)
            perform(machine.responseHead(status: Int(head.status.code), block: block))
        case .body(.byteBuffer(let chunk)):
            perform(machine.responseBody(chunk))
        case .body(.fileRegion):
            assertionFailure("an HTTP/2 stream is answered from buffers")
            perform(machine.abort())
        case .end(let trailers):
            endResponse(trailers: trailers, closingAfter: false)
        }
    }

    package func endResponse(trailers: HTTPHeaders?, closingAfter: Bool) {
        let block = trailers.flatMap { $0.isEmpty ? nil : HPACKHeaders(httpHeaders: $0) }
        perform(machine.responseEnd(trailers: block, closingAfter: closingAfter))
    }

    package func flushResponse() {
        perform(machine.flush())
    }

    package var responseWritable: Bool {
        machine.pendingBytes < HTTP2Limits.streamOutboundHighWatermark && connection.isWritable
    }

    /// Resets this stream only: the connection and its other streams go on.
    package func abortResponse() {
        perform(machine.abort())
    }

    package var readUnderWay: Bool { connection.readUnderWay }

    package func pauseRequestBody() {
        perform(machine.pause())
    }

    package func resumeRequestBody() {
        perform(machine.resume())
    }

    package func exchangeAnswered() {}

    // MARK: From the connection

    /// Starts the exchange at the end of the read that brought the head, and hands it the body
    /// that came with it.
    package func start(memo: inout ProxyEngine.ConnectionMemo) {
        let action = machine.start()
        guard case .startExchange = action else { return perform(action) }
        exchange?.start(memo: &memo)
        perform(machine.readyForPart())
    }

    /// A frame of this stream from the client: DATA and trailers go to the exchange; what else
    /// comes (WINDOW_UPDATE, PRIORITY, RST_STREAM) NIOHTTP2Handler has acted on already.
    package func received(_ payload: HTTP2Frame.FramePayload) {
        switch payload {
        case .data(let data):
            guard case .byteBuffer(let chunk) = data.data else { return }
            let length = data.data.readableBytes + (data.paddingBytes.map { $0 + 1 } ?? 0)
            perform(machine.dataReceived(chunk, length: length, endStream: data.endStream))
        case .headers(let trailers) where trailers.endStream:
            perform(machine.trailersReceived())
        default:
            return
        }
    }

    /// The connection's read has been handed over: the exchange sends on what it brought, and
    /// a body still open is timed from here while the gateway asks for more.
    package func readComplete() {
        exchange?.clientReadComplete()
        perform(machine.bodyWanted(now: eventLoop.now))
    }

    /// The stream closed: reset by the client, or the connection went.
    package func streamClosed() {
        perform(machine.streamClosed())
    }

    /// The connection takes writes again.
    package func connectionWritable() {
        perform(machine.connectionWritable())
    }

    // MARK: Performing the machine's actions

    private func perform(_ first: StateMachine.Action) {
        var action = first
        // Actions that hand the exchange a part (or the window it opened) continue with the
        // next one: the exchange may pause in between.
        while true {
            switch action {
            case .none:
                return
            case .startExchange:
                assertionFailure("only start(memo:) starts the exchange")
                return
            case .deliver(let part, let timer):
                apply(timer)
                exchange?.requestPart(part)
            case .handOver(let timer):
                apply(timer)
            case .sendWindowUpdate(let increment):
                write(.windowUpdate(windowSizeIncrement: increment))
            case .resumeBody:
                perform(machine.readyForPart())
                perform(machine.bodyWanted(now: eventLoop.now))
                connection.flush()
                return
            case .changeTimer(let change):
                apply(change)
                return
            case .write(let frame):
                send(frame)
                return
            case .flush(let frame):
                if let frame { send(frame) }
                connection.flush()
                return
            case .endStream(let before, let last, let reset):
                if let before { send(before) }
                switch last {
                case .headers(let headers): write(.headers(.init(headers: headers, endStream: true)))
                case .data(let data): write(.data(.init(data: .byteBuffer(data), endStream: true)))
                }
                guard let reset else {
                    connection.flush()
                    return
                }
                connection.flushNow()
                write(.rstStream(reset))
                connection.flush()
                return
            case .reset(let code):
                write(.rstStream(code))
                connection.flush()
                return
            case .notifyWritable:
                exchange?.clientWritabilityChanged()
                return
            case .clientClosed:
                closeExchange()
                return
            case .stalled(let answer):
                if let answer {
                    let (head, body) = answer.channelParts(requestID: RequestID.generate())
                    write(.headers(.init(headers: HTTP2ResponseBlock.make(status: head.status, fields: head.headers))))
                    write(.data(.init(data: .byteBuffer(body), endStream: true)))
                    connection.flushNow()
                    write(.rstStream(.noError))
                } else {
                    write(.rstStream(.internalError))
                }
                connection.flush()
                closeExchange()
                return
            }
            action = machine.readyForPart()
        }
    }

    /// The exchange is over as far as the client goes: told once, then let go.
    private func closeExchange() {
        bodyTimer?.cancel()
        let exchange = self.exchange
        self.exchange = nil
        exchange?.clientClosed()
    }

    private func apply(_ change: DeadlineTimer.Change) {
        if bodyTimer == nil, case .expire = change {
            bodyTimer = DeadlineTimer(eventLoop: eventLoop) { [weak self] in self?.bodyDeadlinePassed() }
        }
        bodyTimer?.apply(change)
    }

    private func bodyDeadlinePassed() {
        perform(machine.bodyDeadlinePassed())
    }

    // MARK: Frames

    /// A response frame; DATA is counted until its bytes have gone.
    private func send(_ frame: StateMachine.Frame) {
        switch frame {
        case .headers(let headers):
            write(.headers(.init(headers: headers)))
        case .data(let data):
            let size = data.readableBytes
            let promise = eventLoop.makePromise(of: Void.self)
            promise.futureResult.assumeIsolated().whenComplete { _ in
                self.perform(self.machine.bytesSent(size, connectionWritable: self.connection.isWritable))
            }
            connection.write(HTTP2Frame(streamID: id, payload: .data(.init(data: .byteBuffer(data)))), promise: promise)
        }
    }

    private func write(_ payload: HTTP2Frame.FramePayload) {
        connection.write(HTTP2Frame(streamID: id, payload: payload), promise: nil)
    }
}
