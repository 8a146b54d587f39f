import NIOCore
import NIOHTTP1

/// ``RequestHeadRules`` for an HTTP/2 stream: the same canonical path and one-credential rules
/// an HTTP/1 request gets from ``ClientProtectionHandler``, so no route can be walked around
/// over HTTP/2 either. A stream carries one request, so a refused head is answered `400` in the
/// error shape and the stream ends; the connection and its other streams go on.
final class StreamHeadRulesHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart
    typealias OutboundIn = HTTPServerResponsePart
    typealias OutboundOut = HTTPServerResponsePart

    /// The head was refused: what else the client sends on this stream is dropped.
    private var refused = false

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if refused { return }
        guard case .head(let received) = unwrapInboundIn(data) else {
            context.fireChannelRead(data)
            return
        }
        switch RequestHeadRules.admit(received) {
        case .success(let head):
            context.fireChannelRead(wrapInboundOut(.head(head)))
        case .failure(let error):
            refused = true
            let (head, body) = error.channelParts(requestID: RequestIDMiddleware.generate())
            context.write(wrapOutboundOut(.head(head)), promise: nil)
            context.write(wrapOutboundOut(.body(.byteBuffer(body))), promise: nil)
            context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
        }
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        context.write(data, promise: promise)
    }
}
