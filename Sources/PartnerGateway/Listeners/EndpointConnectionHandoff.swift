import Logging
import NIOCore
import NIOHTTP1

/// The last handler of an HTTP/1.1 connection until it carries a request for one of the
/// gateway's own endpoints: then, at that request's first part, the connection gets what
/// Hummingbird needs (``GatewayHTTP1Channel/addEndpointHandlers(to:)``) and a task that serves
/// it (``GatewayHTTP1Channel/serveEndpoints(_:logger:)``), and this handler only passes reads on.
///
/// Why lazily: a proxied request is answered on the event loop and never needs them, and an
/// idle keep-alive connection should cost its socket and its state machine, not an async
/// channel and a suspended task (docs/DECISIONS.md, "Idle connections without a task").
final class EndpointConnectionHandoff: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart

    private let http1: GatewayHTTP1Channel
    private let logger: Logger
    private var handedOff = false

    init(http1: GatewayHTTP1Channel, logger: Logger) {
        self.http1 = http1
        self.logger = logger
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard handOff(context) else { return }
        context.fireChannelRead(data)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        // An error the connection handler leaves to the endpoints' side (input that went bad
        // after a request): Hummingbird answers it (`400` for a parser error) and closes.
        guard handOff(context) else { return }
        context.fireErrorCaught(error)
    }

    /// Adds the endpoints' handlers and task once; false if the connection could not take them.
    private func handOff(_ context: ChannelHandlerContext) -> Bool {
        guard !handedOff else { return true }
        handedOff = true
        do {
            http1.serveEndpoints(try http1.addEndpointHandlers(to: context.channel), logger: logger)
            return true
        } catch {
            context.close(promise: nil)
            return false
        }
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        // Before the handoff nobody reads on: a half-closure is the connection handler's to
        // finish (``HTTP1ConnectionHandler`` answers, then closes). After it, Hummingbird's
        // reader ends with it.
        if !handedOff, case ChannelEvent.inputClosed = event { return }
        context.fireUserInboundEventTriggered(event)
    }
}
