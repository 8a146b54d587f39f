import GatewayEdge
import NIOCore
import NIOPosix

/// One event loop's upstream connections for the HTTP/2 floor: a request takes an idle one
/// (or opens one) and gives it back when its response is complete. Used only on its loop.
final class FloorUpstreamPool: @unchecked Sendable {
    private let loop: any EventLoop
    private let address: SocketAddress
    private var idle: [FloorUpstreamConnection] = []

    init(loop: any EventLoop, address: SocketAddress) {
        self.loop = loop
        self.address = address
    }

    /// Sends one request's bytes; the response goes to `responder` for `stream`.
    func send(_ request: ByteBuffer, stream: Int, responder: any FloorResponder) {
        // One the upstream closed while it was idle is dropped, as the gateway's pool does.
        while let connection = idle.popLast() {
            guard connection.isActive else { continue }
            connection.send(request, stream: stream, responder: responder)
            return
        }
        let connection = FloorUpstreamConnection(pool: self)
        let waiting = NIOLoopBound(responder, eventLoop: loop)
        ClientBootstrap(group: loop)
            .channelOption(.tcpOption(.tcp_nodelay), value: 1)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture { try channel.pipeline.syncOperations.addHandler(connection) }
            }
            .connect(to: address)
            .whenSuccess { _ in connection.send(request, stream: stream, responder: waiting.value) }
    }

    func release(_ connection: FloorUpstreamConnection) {
        idle.append(connection)
    }
}

/// One upstream connection of a ``FloorUpstreamPool``: one request at a time.
final class FloorUpstreamConnection: ChannelInboundHandler, PassFlushable, @unchecked Sendable {
    typealias InboundIn = ByteBuffer

    private unowned let pool: FloorUpstreamPool
    private var context: ChannelHandlerContext?
    private var reader = UpstreamResponseReader()
    private var waiting: (stream: Int, responder: any FloorResponder)?
    var passFlushPending = false

    init(pool: FloorUpstreamPool) {
        self.pool = pool
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
    }

    var isActive: Bool { context?.channel.isActive ?? false }

    func send(_ request: ByteBuffer, stream: Int, responder: any FloorResponder) {
        guard let context else { return }
        waiting = (stream, responder)
        context.write(wrapOutboundOut(request), promise: nil)
        PassFlushes.flush(self, on: context.eventLoop)
    }

    typealias OutboundOut = ByteBuffer

    func flushAtPassEnd() {
        context?.flush()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let valid = reader.read(unwrapInboundIn(data)) { response in
            guard let (stream, responder) = waiting else { return }
            waiting = nil
            pool.release(self)
            responder.respond(response, stream: stream)
        }
        if !valid { context.close(promise: nil) }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }
}
