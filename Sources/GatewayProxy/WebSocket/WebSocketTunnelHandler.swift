import NIOCore

/// One side of a ``WebSocketTunnel`` in its channel's pipeline: hands the bytes it reads to
/// the tunnel and writes what the tunnel gives it. It reads only when the tunnel asks (the
/// other side can take more), whatever the channel's `autoRead` or the handlers after it ask.
package final class WebSocketTunnelHandler: ChannelDuplexHandler, RemovableChannelHandler {
    package typealias InboundIn = ByteBuffer
    package typealias OutboundIn = ByteBuffer
    package typealias OutboundOut = ByteBuffer

    package let side: WebSocketTunnel.Side
    /// Until the tunnel ends (then the cycle between them is broken).
    var tunnel: WebSocketTunnel?
    private var context: ChannelHandlerContext?
    private var readHeld = false
    /// The tunnel has ended and this side's output is closed: what still arrives is dropped.
    private var lingering = false

    init(side: WebSocketTunnel.Side) {
        self.side = side
    }

    var isActive: Bool { context?.channel.isActive ?? false }
    var isWritable: Bool { context?.channel.isWritable ?? false }
    var allocator: ByteBufferAllocator { context?.channel.allocator ?? ByteBufferAllocator() }

    package func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        // Reads are this handler's alone: a read the channel makes on its own would pass the
        // HTTP handlers behind it, which hold it, and TLS asks for the next record's bytes
        // itself only when the channel does not read on its own.
        try? context.channel.syncOptions?.setOption(ChannelOptions.autoRead, value: false)
    }

    package func handlerRemoved(context: ChannelHandlerContext) {
        self.context = nil
    }

    // MARK: Inbound

    package func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        tunnel?.read(unwrapInboundIn(data), from: side)
    }

    package func channelReadComplete(context: ChannelHandlerContext) {
        if lingering { context.read() }
        tunnel?.readComplete(from: side)
    }

    package func channelWritabilityChanged(context: ChannelHandlerContext) {
        tunnel?.writabilityChanged(of: side)
    }

    package func channelInactive(context: ChannelHandlerContext) {
        tunnel?.inactive(side)
    }

    package func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }

    package func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        // Lingering, the peer closed its side too: nothing more can arrive.
        if lingering, event as? ChannelEvent == .inputClosed {
            context.close(promise: nil)
            return
        }
        // Graceful shutdown: the upgraded connection is told so in a close frame.
        if event is ChannelShouldQuiesceEvent {
            tunnel?.close(code: WebSocketTunnel.CloseCode.goingAway, reason: "shutdown")
            return
        }
        context.fireUserInboundEventTriggered(event)
    }

    // MARK: Outbound

    /// Reads come from the tunnel alone.
    package func read(context: ChannelHandlerContext) {}

    // MARK: For the tunnel

    func read() {
        readHeld = false
        context?.read()
    }

    func holdRead() {
        readHeld = true
    }

    func releaseHeldRead() {
        if readHeld { read() }
    }

    func write(_ bytes: ByteBuffer) {
        context?.write(wrapOutboundOut(bytes), promise: nil)
    }

    func flush() {
        context?.flush()
    }

    /// Closes after what was written. `lingering`: stop sending first, then read and drop what
    /// still arrives until the peer closes, at most that long. The client answers the gateway's
    /// close frame with its own (RFC 6455 §5.5.1), and closing outright with it unread would
    /// reset the client's connection.
    func closeAfterWrites(lingering: TimeAmount? = nil) {
        guard let context else { return }
        guard context.channel.isActive else { return }
        context.writeAndFlush(wrapOutboundOut(ByteBuffer())).assumeIsolated().whenComplete { _ in
            guard let lingering else {
                context.close(promise: nil)
                return
            }
            self.lingering = true
            context.close(mode: .output, promise: nil)
            context.read()
            context.eventLoop.assumeIsolated().scheduleTask(in: lingering) { context.close(promise: nil) }
        }
    }
}
