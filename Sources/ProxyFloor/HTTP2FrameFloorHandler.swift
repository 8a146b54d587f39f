import GatewayEdge
import NIOCore
import NIOHPACK
import NIOHTTP2

/// The HTTP/2 floor without child channels: one handler after `NIOHTTP2Handler` reads every
/// stream's frames, sends each request as HTTP/1.1 bytes on its loop's upstream pool, and
/// answers HEADERS + DATA, flushed at the end of the loop's pass.
final class HTTP2FrameFloorHandler: ChannelInboundHandler, FloorResponder, PassFlushable {
    typealias InboundIn = HTTP2Frame
    typealias OutboundOut = HTTP2Frame

    private let pool: FloorUpstreamPool
    private var context: ChannelHandlerContext?
    /// Requests whose body is still coming: their heads and the body so far.
    private var open: [HTTP2StreamID: (HPACKHeaders, ByteBuffer)] = [:]
    var passFlushPending = false

    init(pool: FloorUpstreamPool) {
        self.pool = pool
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        switch frame.payload {
        case .headers(let headers):
            if headers.endStream {
                send(headers.headers, body: nil, stream: frame.streamID, context: context)
            } else {
                open[frame.streamID] = (headers.headers, context.channel.allocator.buffer(capacity: 0))
            }
        case .data(let data):
            guard case (let head, var body)? = open[frame.streamID], case .byteBuffer(var bytes) = data.data else { return }
            body.writeBuffer(&bytes)
            if data.endStream {
                open[frame.streamID] = nil
                send(head, body: body, stream: frame.streamID, context: context)
            } else {
                open[frame.streamID] = (head, body)
            }
        case .rstStream:
            open[frame.streamID] = nil
        default:
            break
        }
    }

    private func send(_ head: HPACKHeaders, body: ByteBuffer?, stream: HTTP2StreamID, context: ChannelHandlerContext) {
        guard let request = HTTP2RequestBytes.make(head, body: body, allocator: context.channel.allocator) else {
            context.write(wrapOutboundOut(HTTP2Frame(streamID: stream, payload: .rstStream(.protocolError))), promise: nil)
            return
        }
        pool.send(request, stream: Int(stream), responder: self)
    }

    func respond(_ response: FloorResponse, stream: Int) {
        guard let context else { return }
        let id = HTTP2StreamID(stream)
        let headers = HTTP2Frame.FramePayload.Headers(headers: response.headers, endStream: false)
        context.write(wrapOutboundOut(HTTP2Frame(streamID: id, payload: .headers(headers))), promise: nil)
        let data = HTTP2Frame.FramePayload.Data(data: .byteBuffer(response.body), endStream: true)
        context.write(wrapOutboundOut(HTTP2Frame(streamID: id, payload: .data(data))), promise: nil)
        PassFlushes.flush(self, on: context.eventLoop)
    }

    func flushAtPassEnd() {
        context?.flush()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }
}
