import NIOCore
import NIOHTTP1

/// The last handler of an HTTP/2 stream's child channel (``HTTP2StreamSetup``): the request
/// passed the edge and is for one of the gateway's own endpoints (proxied streams get no
/// child channel), so at its first part the stream gets what Hummingbird needs
/// (``GatewayHTTP1Channel/addEndpointHandlers(to:)``) and goes to the connection's task that
/// serves such streams. A stream the edge refused never reaches it.
///
/// Why lazily: an async channel and a Swift task per stream would cost more than forwarding a
/// proxied stream, which is answered on the event loop and never needs them, nor this handler
/// (docs/DECISIONS.md, "HTTP/2: proxied streams without child channels").
final class EndpointStreamHandoff: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart

    private let setup: HTTP2StreamSetup
    private var handedOff = false

    init(setup: HTTP2StreamSetup) {
        self.setup = setup
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if !handedOff {
            handedOff = true
            do {
                let endpointStream = try setup.http1.addEndpointHandlers(to: context.channel)
                guard case .enqueued = setup.endpointStreams.yield(endpointStream) else {
                    // The connection is closing: nobody will serve the stream.
                    context.close(promise: nil)
                    return
                }
            } catch {
                context.close(promise: nil)
                return
            }
        }
        context.fireChannelRead(data)
    }
}
