import GatewayEdge
import NIOCore
import NIOHTTP1
import NIOPosix

/// One client connection: opens its upstream connection on the same event loop, writes each
/// request part to it as it arrives and flushes at the end of the loop's pass, as the gateway
/// does (`PassFlushes`).
final class CodecFloorClientHandler: ChannelInboundHandler, PassFlushable {
    typealias InboundIn = HTTPServerRequestPart

    private let upstreamAddress: SocketAddress
    private var upstream: (any Channel)?
    /// Parts read before the upstream connection is up.
    private var waiting: [HTTPClientRequestPart] = []
    var passFlushPending = false

    init(upstream: SocketAddress) {
        upstreamAddress = upstream
    }

    func channelActive(context: ChannelHandlerContext) {
        let client = context.channel
        let bound = NIOLoopBound(self, eventLoop: context.eventLoop)
        ClientBootstrap(group: context.eventLoop)
            .channelOption(.tcpOption(.tcp_nodelay), value: 1)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHTTPClientHandlers()
                    try channel.pipeline.syncOperations.addHandler(CodecFloorUpstreamHandler(client: client))
                }
            }
            .connect(to: upstreamAddress)
            .whenComplete { result in
                switch result {
                case .success(let channel): bound.value.connected(channel)
                case .failure: client.close(promise: nil)
                }
            }
        context.fireChannelActive()
    }

    private func connected(_ channel: any Channel) {
        upstream = channel
        for part in waiting { channel.write(part, promise: nil) }
        waiting = []
        channel.flush()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let part: HTTPClientRequestPart
        switch unwrapInboundIn(data) {
        case .head(let head): part = .head(head)
        case .body(let body): part = .body(.byteBuffer(body))
        case .end(let trailers): part = .end(trailers)
        }
        if let upstream { upstream.write(part, promise: nil) } else { waiting.append(part) }
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
