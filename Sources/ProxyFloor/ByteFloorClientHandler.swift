import GatewayEdge
import NIOCore
import NIOPosix

/// The byte floor's client connection: no HTTP codec. Each head is found by `MessageFraming` in
/// the read buffer and written upstream with the body bytes that came with it as one slice of
/// that buffer; writes are flushed at the end of the loop's pass, as the gateway's are.
final class ByteFloorClientHandler: ChannelInboundHandler, PassFlushable {
    typealias InboundIn = ByteBuffer

    private let upstreamAddress: SocketAddress
    private var upstream: (any Channel)?
    /// Slices read before the upstream connection is up.
    private var waiting: [ByteBuffer] = []
    private var framing = MessageFraming()
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
                    try channel.pipeline.syncOperations.addHandler(ByteFloorUpstreamHandler(client: client))
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
        for slice in waiting { channel.write(slice, promise: nil) }
        waiting = []
        channel.flush()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let complete = framing.read(unwrapInboundIn(data)) { slice in
            if let upstream { upstream.write(slice, promise: nil) } else { waiting.append(slice) }
        }
        if !complete { context.close(promise: nil) }
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
