import GatewayEdge
import NIOCore

/// The byte floor's upstream connection: frames each response by its head as the client side
/// frames requests, and writes the slices to the client connection, flushed at the end of the
/// loop's pass.
final class ByteFloorUpstreamHandler: ChannelInboundHandler, PassFlushable {
    typealias InboundIn = ByteBuffer

    private let client: any Channel
    private var framing = MessageFraming()
    var passFlushPending = false

    init(client: any Channel) {
        self.client = client
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let complete = framing.read(unwrapInboundIn(data)) { slice in
            client.write(slice, promise: nil)
        }
        if !complete { context.close(promise: nil) }
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        PassFlushes.flush(self, on: context.eventLoop)
    }

    func flushAtPassEnd() {
        client.flush()
    }

    func channelInactive(context: ChannelHandlerContext) {
        client.close(promise: nil)
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }
}
