import GatewayEdge
import NIOCore
import NIOHPACK
import NIOHTTP2

/// The HTTP/2 floor the idiomatic way: a child channel per stream from NIO's multiplexer,
/// this handler in it, the same upstream pool and HEADERS + DATA answer.
final class HTTP2StreamFloorHandler: ChannelInboundHandler, FloorResponder, PassFlushable {
    typealias InboundIn = HTTP2Frame.FramePayload
    typealias OutboundOut = HTTP2Frame.FramePayload

    private let pool: FloorUpstreamPool
    private var context: ChannelHandlerContext?
    private var head: HPACKHeaders?
    private var body: ByteBuffer?
    var passFlushPending = false

    init(pool: FloorUpstreamPool) {
        self.pool = pool
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .headers(let headers):
            head = headers.headers
            if headers.endStream { send(context: context) }
        case .data(let data):
            guard case .byteBuffer(var bytes) = data.data else { return }
            if body == nil { body = bytes } else { body!.writeBuffer(&bytes) }
            if data.endStream { send(context: context) }
        default:
            break
        }
    }

    private func send(context: ChannelHandlerContext) {
        guard let head, let request = HTTP2RequestBytes.make(head, body: body, allocator: context.channel.allocator) else {
            context.close(promise: nil)
            return
        }
        pool.send(request, stream: 0, responder: self)
    }

    func respond(_ response: FloorResponse, stream: Int) {
        guard let context else { return }
        context.write(wrapOutboundOut(.headers(.init(headers: response.headers, endStream: false))), promise: nil)
        context.write(wrapOutboundOut(.data(.init(data: .byteBuffer(response.body), endStream: true))), promise: nil)
        PassFlushes.flush(self, on: context.eventLoop)
    }

    func flushAtPassEnd() {
        context?.flush()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }
}
