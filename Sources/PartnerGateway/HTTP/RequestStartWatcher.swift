import NIOCore

/// The first handler of a public connection, in front of the HTTP decoder: it sees the raw
/// bytes, so it knows when a request *starts* arriving, which the decoder only reports once
/// the whole head is in. ``ClientProtectionHandler`` (after the decoder) tells it when a head
/// arrived and when a response ended; it closes a connection whose head is not complete
/// within `headerReadTimeout` of the connection opening or of the request's first byte.
final class RequestStartWatcher: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer

    private let headerReadTimeout: TimeAmount
    private var context: ChannelHandlerContext?
    private var timer: Scheduled<Void>?
    /// Between a response's end and the next request's head: bytes now start a request.
    private var awaitingHead = true

    init(headerReadTimeout: TimeAmount) {
        self.headerReadTimeout = headerReadTimeout
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        // The first request's clock starts with the connection: a client that connects and
        // sends nothing is a slow-header client too.
        if context.channel.isActive { arm() }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        disarm()
        self.context = nil
    }

    func channelActive(context: ChannelHandlerContext) {
        arm()
        context.fireChannelActive()
    }

    func channelInactive(context: ChannelHandlerContext) {
        disarm()
        context.fireChannelInactive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if awaitingHead { arm() }
        context.fireChannelRead(data)
    }

    func headArrived() {
        awaitingHead = false
        disarm()
    }

    func responseEnded() {
        awaitingHead = true
    }

    private func arm() {
        guard timer == nil, let context else { return }
        timer = context.eventLoop.assumeIsolated().scheduleTask(in: headerReadTimeout) { [weak self] in
            guard let self, self.awaitingHead else { return }
            self.timer = nil
            self.context?.close(promise: nil)
        }
    }

    private func disarm() {
        timer?.cancel()
        timer = nil
    }
}
