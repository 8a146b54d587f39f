import NIOCore
import NIOHTTP1

/// ``RequestHeadRules`` for an HTTP/2 stream: the same canonical path and one-credential rules
/// an HTTP/1 request gets from ``ClientProtectionHandler``, so no route can be walked around
/// over HTTP/2 either, and the same header limit (`server.max_header_bytes`, `431`). A stream
/// carries one request, so a refused head is answered `400` (or `431`) in the error shape and
/// the stream ends; the connection and its other streams go on.
///
/// The header limit is checked here rather than left to NIOHTTP2's decoder: a header block
/// over the decoder's limit is a connection error (GOAWAY, every stream on the connection
/// lost), because HPACK's shared state cannot be resynchronised without decoding it. The
/// decoder is therefore given a higher hard limit (``HTTP2Limits/decoderHeaderListSize(maxHeaderBytes:)``),
/// and a block between the two gets its `431` like an HTTP/1 request.
final class StreamHeadRulesHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart
    typealias OutboundIn = HTTPServerResponsePart
    typealias OutboundOut = HTTPServerResponsePart

    /// `server.max_header_bytes`: the largest header list a request may have.
    private let maxHeaderBytes: Int
    /// The head was refused: what else the client sends on this stream is dropped.
    private var refused = false

    init(maxHeaderBytes: Int) {
        self.maxHeaderBytes = maxHeaderBytes
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if refused { return }
        guard case .head(let received) = unwrapInboundIn(data) else {
            context.fireChannelRead(data)
            return
        }
        if Self.headerListSize(of: received) > maxHeaderBytes {
            refuse(.headersTooLarge, context: context)
            return
        }
        switch RequestHeadRules.admit(received) {
        case .success(let head):
            context.fireChannelRead(wrapInboundOut(.head(head)))
        case .failure(let error):
            refuse(error, context: context)
        }
    }

    private func refuse(_ error: GatewayError, context: ChannelHandlerContext) {
        refused = true
        let (head, body) = error.channelParts(requestID: RequestIDMiddleware.generate())
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        context.write(wrapOutboundOut(.body(.byteBuffer(body))), promise: nil)
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
    }

    /// The header list's size as RFC 9113 counts it (each field's name and value plus 32),
    /// the pseudo-fields `:method` and `:path` included (`:authority` arrives as `Host`).
    static func headerListSize(of head: HTTPRequestHead) -> Int {
        var size = 7 + head.method.rawValue.utf8.count + 32 + 5 + head.uri.utf8.count + 32
        for (name, value) in head.headers {
            size += name.utf8.count + value.utf8.count + 32
        }
        return size
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        context.write(data, promise: promise)
    }
}
