import NIOCore
import NIOHPACK
import NIOHTTP1
import NIOHTTP2

/// One proxied HTTP/2 stream, driven from the connection's frames by ``HTTP2ProxyStreams``
/// instead of a child channel: the ``ProxyClient`` its ``ProxyExchange`` answers through.
///
/// The answer becomes frames here: the head one HEADERS frame, each body part one DATA frame,
/// and the end sets END_STREAM on the last frame written (no empty DATA frame after it). The
/// last frame is held until the next write or flush for that, never past a flush.
///
/// Back-pressure: NIOHTTP2 holds DATA beyond the peer's stream and connection windows and
/// completes a write only once its bytes went out; the body bytes written and not yet gone
/// count against ``HTTP2Limits/streamOutboundHighWatermark``, as a child channel's did, so a
/// large answer to a slow client stops the upstream's reading until they go.
final class HTTP2ProxyStream: ProxyClient {
    let id: HTTP2StreamID
    private unowned let connection: HTTP2ProxyStreams
    /// Kept until the stream closes, so a reset or writability reaches it.
    var exchange: (any ProxiedStreamExchange)?
    /// The last frame written, held for the end's END_STREAM.
    private var held: HTTP2Frame.FramePayload?
    /// Body bytes written and not yet gone to the network.
    private var pendingBytes = 0
    /// END_STREAM or RST_STREAM has been written: nothing more goes out.
    private var answerClosed = false
    /// The stream closed (``HTTP2ProxyStreams`` saw it end).
    private(set) var closed = false

    init(id: HTTP2StreamID, connection: HTTP2ProxyStreams) {
        self.id = id
        self.connection = connection
    }

    // MARK: ProxyClient

    func writeAnswer(_ part: HTTPServerResponsePart) {
        guard !answerClosed else { return }
        writeHeld()
        switch part {
        case .head(let head):
            held = .headers(.init(headers: Self.headerBlock(status: head.status, fields: head.headers)))
        case .body(let body):
            pendingBytes += body.readableBytes
            held = .data(.init(data: body))
        case .end(let trailers):
            endAnswer(trailers: trailers, closingAfter: false)
        }
    }

    func endAnswer(trailers: HTTPHeaders?, closingAfter: Bool) {
        guard !answerClosed else { return }
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
        // The request ended with its head, so the answer's end closes the stream: nothing is
        // left to close after it, whatever `closingAfter` asks.
        answerClosed = true
        connection.flush()
    }

    func flushAnswer() {
        writeHeld()
        connection.flush()
    }

    var answerWritable: Bool {
        pendingBytes < HTTP2Limits.streamOutboundHighWatermark && connection.isWritable
    }

    /// Resets this stream only: the connection and its other streams go on.
    func abortAnswer() {
        guard !answerClosed else { return }
        answerClosed = true
        held = nil
        write(.rstStream(.internalError))
        connection.flush()
    }

    /// Owned streams carry no request body (``HTTP2ProxyStreams``), so there is no read to steer.
    var readUnderWay: Bool { false }
    func pauseRequestBody() {}
    func resumeRequestBody() {}
    func exchangeAnswered() {}

    // MARK: From the connection

    /// The stream closed: reset by the client, or the connection went.
    func streamClosed() {
        closed = true
        let exchange = self.exchange
        self.exchange = nil
        exchange?.clientClosed()
    }

    /// The connection takes writes again.
    func connectionWritable() {
        if answerWritable { exchange?.clientWritabilityChanged() }
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
        guard let eventLoop = connection.eventLoop else { return }
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

    /// `:status` and the fields, names lower-cased and HTTP/1's connection fields left out, as
    /// RFC 9113 requires (what NIOHTTP2's HTTP/1 codec did for a child channel).
    private static func headerBlock(status: HTTPResponseStatus, fields: HTTPHeaders) -> HPACKHeaders {
        var block = HPACKHeaders([(":status", String(status.code))])
        block.add(contentsOf: HPACKHeaders(httpHeaders: fields, normalizeHTTPHeaders: true))
        return block
    }
}
