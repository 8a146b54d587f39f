import GatewayEdge
import NIOCore
import NIOPosix

/// One client connection of the floor: opens its upstream connection on the same event loop,
/// passes on what it reads as it arrives (how heads are read is `Heads`'), and flushes at the
/// end of the loop's pass, as the gateway does (`PassFlushes`).
final class FloorClientHandler<Heads: FloorHeads>: ChannelInboundHandler, PassFlushable {
    typealias InboundIn = Heads.Part

    private let upstreamAddress: SocketAddress
    private var upstream: (any Channel)?
    /// What was read before the upstream connection is up.
    private var waiting: [Heads.Forwarded] = []
    private var heads = Heads()
    var passFlushPending = false

    init(upstream: SocketAddress) {
        upstreamAddress = upstream
    }

    // Added to an active channel after TLS's ALPN, or before activation without TLS.
    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { connectUpstream(context: context) }
    }

    func channelActive(context: ChannelHandlerContext) {
        connectUpstream(context: context)
        context.fireChannelActive()
    }

    private func connectUpstream(context: ChannelHandlerContext) {
        let client = context.channel
        let bound = NIOLoopBound(self, eventLoop: context.eventLoop)
        ClientBootstrap(group: context.eventLoop)
            .channelOption(.socketOption(.tcp_nodelay), value: 1)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture { try Heads.addUpstreamHandlers(to: channel, client: client) }
            }
            .connect(to: upstreamAddress)
            .whenComplete { result in
                switch result {
                case .success(let channel): bound.value.connected(channel)
                case .failure: client.close(promise: nil)
                }
            }
    }

    private func connected(_ channel: any Channel) {
        upstream = channel
        for part in waiting { channel.write(part, promise: nil) }
        waiting = []
        channel.flush()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let understood = heads.forward(unwrapInboundIn(data)) { part in
            if let upstream { upstream.write(part, promise: nil) } else { waiting.append(part) }
        }
        if !understood { context.close(promise: nil) }
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        PassFlushes.flush(self, on: context.eventLoop)
    }

    func flushAtPassEnd() {
        upstream?.flush()
    }

    func channelInactive(context: ChannelHandlerContext) {
        upstream?.close(promise: nil)
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }
}
