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
/// What happens when is decided by its ``StateMachine``; the handler performs its actions.
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

    private var machine: StateMachine
    /// Made when the machine first asks for a deadline: most streams never do.
    private var bodyTimer: DeadlineTimer?
    private var context: ChannelHandlerContext?

    package init(maxHeaderBytes: Int, bodyReadTimeout: TimeAmount, proxiedRoutes: (any ProxiedPaths)?) {
        machine = StateMachine(
            edge: RequestEdge(maxHeaderListSize: maxHeaderBytes, bodyReadTimeout: bodyReadTimeout, anchoredPrefix: proxiedRoutes?.anchoredPrefix),
            proxiedRoutes: proxiedRoutes
        )
    }

    package func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
    }

    package func handlerRemoved(context: ChannelHandlerContext) {
        bodyTimer?.cancel()
        self.context = nil
    }

    package func channelInactive(context: ChannelHandlerContext) {
        perform(machine.channelInactive(), context: context)
        context.fireChannelInactive()
    }

    package func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head): perform(machine.headReceived(head), context: context, data: data)
        case .body: perform(machine.bodyReceived(), context: context, data: data)
        case .end: perform(machine.endReceived(), context: context, data: data)
        }
    }

    package func errorCaught(context: ChannelHandlerContext, error: any Error) {
        perform(machine.errorCaught(), context: context, error: error)
    }

    package func channelReadComplete(context: ChannelHandlerContext) {
        perform(machine.readComplete(now: context.eventLoop.now), context: context)
        context.fireChannelReadComplete()
    }

    package func read(context: ChannelHandlerContext) {
        perform(machine.readRequested(now: context.eventLoop.now), context: context)
        context.read()
    }

    package func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        let action = switch unwrapOutboundIn(data) {
        case .head(let head): machine.responseHead(status: Int(head.status.code))
        case .body: machine.responseBody()
        case .end: machine.responseEnd()
        }
        perform(action, context: context, data: data, promise: promise)
    }

    /// `data`: the part read or written with the input; `error`: the error caught.
    private func perform(
        _ action: StateMachine.Action, context: ChannelHandlerContext, data: NIOAny? = nil,
        promise: EventLoopPromise<Void>? = nil, error: (any Error)? = nil
    ) {
        switch action {
        case .none:
            break
        case .passHead(let head):
            context.fireChannelRead(wrapInboundOut(.head(head)))
        case .pass(let timer):
            apply(timer, context: context)
            if let data { context.fireChannelRead(data) }
        case .refuse(let refusal):
            // Answered in the error shape, then closed: a no-op when both sides have ended,
            // else a reset that tells the client to stop sending.
            refusal.write(to: context).whenComplete { _ in
                context.close(promise: nil)
            }
        case .fireError:
            if let error { context.fireErrorCaught(error) }
        case .changeTimer(let change):
            apply(change, context: context)
        case .write:
            if let data { context.write(data, promise: promise) }
        case .writeThenClose:
            guard let data else { return }
            let written = promise ?? context.eventLoop.makePromise()
            context.write(data, promise: written)
            written.futureResult.assumeIsolated().whenComplete { _ in context.close(promise: nil) }
        case .close:
            context.close(promise: nil)
        case .cancelTimer:
            bodyTimer?.cancel()
        }
    }

    private func apply(_ change: DeadlineTimer.Change, context: ChannelHandlerContext) {
        if bodyTimer == nil, case .expire = change {
            bodyTimer = DeadlineTimer(eventLoop: context.eventLoop) { [weak self] in self?.bodyDeadlinePassed() }
        }
        bodyTimer?.apply(change)
    }

    private func bodyDeadlinePassed() {
        guard let context else { return }
        perform(machine.bodyDeadlinePassed(), context: context)
    }
}
