import HTTPTypes
import NIOCore
import NIOHTTP1
import NIOHTTPTypes

/// Sits in the public listener's pipeline after HTTP decoding (SPEC §2.4 "slow or oversized
/// clients are cut off"):
/// - a request head must arrive whole within `headerReadTimeout` of the connection opening
///   (first request) or of its first byte (later requests on a keep-alive connection; the gap
///   between requests is `server.idle_timeout`'s business), else the connection is closed.
///   Seeing that first byte takes a raw-bytes handler in front of the HTTP decoder,
///   ``RequestStartWatcher``, which this handler installs and drives;
/// - a request whose headers exceed the decoder limits is answered `431` in the spec's error
///   shape and the connection closed (Hummingbird itself would answer a bare `400`);
/// - `Expect: 100-continue` is answered `100 Continue` at once (Hummingbird does not, and
///   clients such as curl would wait a second before sending the body).
/// Request smuggling (`Content-Length` with `Transfer-Encoding`, differing `Content-Length`s)
/// is already refused by NIO's llhttp parser and answered `400` by Hummingbird.
final class ClientProtectionHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    private let watcher: RequestStartWatcher

    init(headerReadTimeout: TimeAmount) {
        watcher = RequestStartWatcher(headerReadTimeout: headerReadTimeout)
    }

    func handlerAdded(context: ChannelHandlerContext) {
        try? context.pipeline.syncOperations.addHandler(watcher, position: .first)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if case .head(let head) = unwrapInboundIn(data) {
            watcher.headArrived()
            if head.headerFields[.expect]?.lowercased() == "100-continue" {
                context.writeAndFlush(wrapOutboundOut(.head(HTTPResponse(status: .continue))), promise: nil)
            }
        }
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if case .end = unwrapOutboundIn(data) {
            watcher.responseEnded()
        }
        context.write(data, promise: promise)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        guard let parserError = error as? HTTPParserError, parserError == .headerOverflow else {
            context.fireErrorCaught(error)
            return
        }
        watcher.headArrived()
        var body = context.channel.allocator.buffer(capacity: 128)
        body.writeString(#"{"error":{"code":"HEADERS_TOO_LARGE","message":"the request headers are too large"}}"#)
        let head = HTTPResponse(status: .requestHeaderFieldsTooLarge, headerFields: [
            .contentType: "application/json", .contentLength: String(body.readableBytes), .connection: "close",
        ])
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        context.write(wrapOutboundOut(.body(body)), promise: nil)
        context.writeAndFlush(wrapOutboundOut(.end(nil))).whenComplete { _ in context.close(promise: nil) }
    }
}
