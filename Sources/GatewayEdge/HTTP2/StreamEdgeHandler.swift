import NIOCore
import NIOHTTP1

/// The request edge of an HTTP/2 stream's child channel: the rules an HTTP/1 request gets, from
/// the same ``RequestEdge``, so no rule can be walked around over HTTP/2:
/// - ``RequestHeadRules`` (canonical path, one credential): a refused head is `400`;
/// - the header limit (`server.max_header_bytes`): a larger header list is `431`;
/// - `server.body_read_timeout`: a body that stops arriving is `408 REQUEST_TIMEOUT` if no
///   response has started, else the stream is just reset.
/// A stream carries one request, so a refused one is answered in the error shape and the stream
/// ends; the connection and its other streams go on. Proxied streams, which get no child
/// channel, are held to the same ``RequestEdge`` by ``HTTP2StreamRouter`` and
/// ``HTTP2ProxyStream``; a head they refuse comes here for its response.
///
/// The header limit is checked here rather than left to NIOHTTP2's decoder: a header block
/// over the decoder's limit is a connection error (GOAWAY, every stream on the connection
/// lost), because HPACK's shared state cannot be resynchronised without decoding it. The
/// decoder is therefore given a higher hard limit (``HTTP2Limits/decoderHeaderListSize(maxHeaderBytes:)``),
/// and a block between the two gets its `431` like an HTTP/1 request.
///
/// The body timer starts only when a read ends with the request still open, so the usual
/// stream, whose head ends it, schedules no timer at all.
///
/// Every stream ends: a refused one is closed once its response is written (a reset, when the
/// client's side is still open), and an error before any head went on, which no handler after
/// this one would ever see (NIOHTTP2's HTTP/1 codec cannot make a head without `:authority`,
/// nor of a `CONNECT`), is answered `400` here. A stream left open would keep its connection
/// from ever being idle.
package final class StreamEdgeHandler: ChannelDuplexHandler, RemovableChannelHandler {
    package typealias InboundIn = HTTPServerRequestPart
    package typealias InboundOut = HTTPServerRequestPart
    package typealias OutboundIn = HTTPServerResponsePart
    package typealias OutboundOut = HTTPServerResponsePart

    /// The public listener's routes: their bodies are timed between reads, every other body
    /// (the gateway's own endpoints) as a whole.
    private let proxiedRoutes: (any ProxiedPaths)?
    private var edge: RequestEdge
    /// Made when ``edge`` first asks for a deadline: most streams never do.
    private var bodyTimer: DeadlineTimer?
    private var context: ChannelHandlerContext?
    /// The head was refused or the body timed out: what else the client sends is dropped.
    private var refused = false
    /// The head has been read and the request's end not yet; `bodyLimit` is how its body is timed.
    private var bodyLimit: BodyReadDeadline.Limit?
    private var bodyTimed = false
    /// A response head (not a `1xx`) has been written.
    private var responseStarted = false
    /// A head went on to the handlers after this one: they answer for the stream from then on.
    private var headPassed = false

    package init(maxHeaderBytes: Int, bodyReadTimeout: TimeAmount, proxiedRoutes: (any ProxiedPaths)?) {
        self.proxiedRoutes = proxiedRoutes
        edge = RequestEdge(maxHeaderListSize: maxHeaderBytes, bodyReadTimeout: bodyReadTimeout)
    }

    package func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
    }

    package func handlerRemoved(context: ChannelHandlerContext) {
        bodyTimer?.cancel()
        self.context = nil
    }

    package func channelInactive(context: ChannelHandlerContext) {
        _ = edge.bodyEnded()
        bodyTimer?.cancel()
        context.fireChannelInactive()
    }

    package func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if refused { return }
        switch unwrapInboundIn(data) {
        case .head(let received):
            switch edge.admit(received) {
            case .success(let head):
                bodyLimit = .of(target: head.uri, proxiedRoutes: proxiedRoutes)
                headPassed = true
                context.fireChannelRead(wrapInboundOut(.head(head)))
            case .failure(let error):
                refuse(error, context: context)
            }
            return
        case .body:
            apply(edge.bodyRead(), context: context)
        case .end:
            bodyLimit = nil
            apply(edge.bodyEnded(), context: context)
        }
        context.fireChannelRead(data)
    }

    package func errorCaught(context: ChannelHandlerContext, error: any Error) {
        if headPassed {
            context.fireErrorCaught(error)
        } else if !refused {
            refuse(.invalidRequest("the request head is not a valid HTTP/2 request"), context: context)
        }
    }

    package func channelReadComplete(context: ChannelHandlerContext) {
        // The request is still open after this read: its body is on its way, and timed.
        if let bodyLimit, !bodyTimed {
            bodyTimed = true
            apply(edge.bodyStarted(limit: bodyLimit, now: context.eventLoop.now), context: context)
        }
        context.fireChannelReadComplete()
    }

    package func read(context: ChannelHandlerContext) {
        if bodyTimed { apply(edge.readRequested(now: context.eventLoop.now), context: context) }
        context.read()
    }

    package func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        switch unwrapOutboundIn(data) {
        case .head(let head) where RequestEdge.startsResponse(status: Int(head.status.code)):
            responseStarted = true
        case .end where bodyLimit != nil:
            // Answered while the client is still sending (Hummingbird answers without reading
            // a body it does not need): the reset ends the stream, as on HTTP/1.1 the closed
            // connection would.
            let written = promise ?? context.eventLoop.makePromise()
            context.write(data, promise: written)
            written.futureResult.assumeIsolated().whenComplete { _ in context.close(promise: nil) }
            return
        default:
            break
        }
        context.write(data, promise: promise)
    }

    private func apply(_ change: DeadlineTimer.Change, context: ChannelHandlerContext) {
        if bodyTimer == nil, case .expire = change {
            bodyTimer = DeadlineTimer(eventLoop: context.eventLoop) { [weak self] in self?.bodyDeadlinePassed() }
        }
        bodyTimer?.apply(change)
    }

    /// The body stalled: `408` if nothing of the response went out yet; the stream then ends.
    private func bodyDeadlinePassed() {
        guard let context, let stall = edge.bodyDeadlinePassed(responseStarted: responseStarted) else { return }
        switch stall {
        case .answer(let error):
            // Answered before whoever serves the request could; its own response then finds
            // the stream closed. The reset tells the client to stop sending.
            refuse(error, context: context)
        case .close:
            context.close(promise: nil)
        }
    }

    /// Answers in the error shape, then closes the stream: a no-op when both sides have ended,
    /// else a reset that tells the client to stop sending.
    private func refuse(_ error: GatewayError, context: ChannelHandlerContext) {
        refused = true
        responseStarted = true
        bodyLimit = nil
        error.write(to: context).whenComplete { _ in
            context.close(promise: nil)
        }
    }
}
