import GatewayEdge
import NIOCore
import NIOHTTP1

/// One upstream connection: writes each response part to its client connection as it arrives
/// and flushes at the end of the loop's pass.
final class CodecFloorUpstreamHandler: ChannelInboundHandler, PassFlushable {
    typealias InboundIn = HTTPClientResponsePart

    private let client: any Channel
    var passFlushPending = false

    init(client: any Channel) {
        self.client = client
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let part: HTTPServerResponsePart
        switch unwrapInboundIn(data) {
        case .head(let head): part = .head(head)
        case .body(let body): part = .body(.byteBuffer(body))
        case .end(let trailers): part = .end(trailers)
        }
        client.write(part, promise: nil)
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
