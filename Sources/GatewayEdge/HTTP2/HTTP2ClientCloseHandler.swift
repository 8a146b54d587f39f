import NIOCore

/// The first handler of an HTTP/2 connection, before TLS: the client's FIN closes the socket
/// at once. HTTP/2 has no half-closed connection, but the listener allows remote half-closure
/// (for HTTP/1.1), so the FIN only announced itself; and a close through NIOSSLHandler would
/// wait up to its shutdown timeout for a close_notify the client can no longer send. Answers
/// still unsent are dropped: nobody is left to read them. Without this, a connection the client
/// closed sat in CLOSE-WAIT, with all it held, until the idle timeout.
package final class HTTP2ClientCloseHandler: ChannelInboundHandler, RemovableChannelHandler {
    package init() {}

    package typealias InboundIn = NIOAny

    package func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if case ChannelEvent.inputClosed = event {
            context.close(promise: nil)
            return
        }
        context.fireUserInboundEventTriggered(event)
    }
}
