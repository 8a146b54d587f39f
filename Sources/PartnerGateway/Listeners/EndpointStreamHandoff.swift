import NIOCore
import NIOHTTP1

/// The last handler of an HTTP/2 stream (``GatewayTLSChannel``), after the proxy engine, which
/// adds it when it passes the stream's request on (``PassedOnRequestHandlers``): the request is
/// for one of the gateway's own endpoints, so only now does the stream get what Hummingbird
/// needs (``GatewayHTTP1Channel/addEndpointHandlers(to:)``) and go to the connection's task
/// that serves such streams.
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
