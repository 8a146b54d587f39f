import HTTPTypes
import NIOCore
import NIOHTTP1
import NIOHTTPTypes

/// Sits in the public listener's pipeline after HTTP decoding (SPEC §2.4 "slow or oversized
/// clients are cut off"):
/// - a connection whose first request head has not fully arrived within `headerReadTimeout`
///   is closed (slow-header clients; keep-alive gaps are left to `server.idle_timeout`);
/// - a request whose headers exceed the decoder limits is answered `431` in the spec's error
///   shape and the connection closed (Hummingbird itself would answer a bare `400`).
/// Request smuggling (`Content-Length` with `Transfer-Encoding`, differing `Content-Length`s)
/// is already refused by NIO's llhttp parser and answered `400` by Hummingbird.
final class ClientProtectionHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    private let headerReadTimeout: TimeAmount
    private var timer: Scheduled<Void>?
    private var sawHead = false

    init(headerReadTimeout: TimeAmount) {
        self.headerReadTimeout = headerReadTimeout
    }

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { arm(context) }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        timer?.cancel()
        timer = nil
    }

    func channelActive(context: ChannelHandlerContext) {
        arm(context)
        context.fireChannelActive()
    }

    func channelInactive(context: ChannelHandlerContext) {
        timer?.cancel()
        timer = nil
        context.fireChannelInactive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if case .head = unwrapInboundIn(data) {
            sawHead = true
            timer?.cancel()
            timer = nil
        }
        context.fireChannelRead(data)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        guard let parserError = error as? HTTPParserError, parserError == .headerOverflow else {
            context.fireErrorCaught(error)
            return
        }
        timer?.cancel()
        timer = nil
        var body = context.channel.allocator.buffer(capacity: 128)
        body.writeString(#"{"error":{"code":"HEADERS_TOO_LARGE","message":"the request headers are too large"}}"#)
        let head = HTTPResponse(status: .requestHeaderFieldsTooLarge, headerFields: [
            .contentType: "application/json", .contentLength: String(body.readableBytes), .connection: "close",
        ])
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        context.write(wrapOutboundOut(.body(body)), promise: nil)
        context.writeAndFlush(wrapOutboundOut(.end(nil))).whenComplete { _ in context.close(promise: nil) }
    }

    private func arm(_ context: ChannelHandlerContext) {
        guard timer == nil, !sawHead else { return }
        timer = context.eventLoop.assumeIsolatedUnsafeUnchecked().scheduleTask(in: headerReadTimeout) { [self] in
            timer = nil
            if !sawHead { context.close(promise: nil) }
        }
    }
}
