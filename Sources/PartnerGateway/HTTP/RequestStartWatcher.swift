import NIOCore

/// The first handler of a connection, in front of the HTTP decoder: it sees the raw bytes, so
/// it knows when a request *starts* arriving, which the decoder only reports once the whole
/// head is in. ``ClientProtectionHandler`` (after the decoder) tells it when a head arrived
/// and when a response ended; it closes a connection whose head is not complete within
/// `headerReadTimeout` of the connection opening or of the request's first byte.
///
/// Its timer is a ``DeadlineTimer``: on a busy keep-alive connection it fires once per
/// `headerReadTimeout`, not once per request.
final class RequestStartWatcher: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer

    private let headerReadTimeout: TimeAmount
    private var timer: DeadlineTimer?
    /// Between a response's end and the next request's head: bytes now start a request.
    private var awaitingHead = true
    /// Whether the head being waited for has started (its first byte, or the connection
    /// opening): its deadline is then set.
    private var headStarted = false

    init(headerReadTimeout: TimeAmount) {
        self.headerReadTimeout = headerReadTimeout
    }

    func handlerAdded(context: ChannelHandlerContext) {
        timer = DeadlineTimer(eventLoop: context.eventLoop) { [weak context] in
            context?.close(promise: nil)
        }
        // The first request's clock starts with the connection: a client that connects and
        // sends nothing is a slow-header client too.
        if context.channel.isActive { headStarts() }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        timer?.cancel()
    }

    func channelActive(context: ChannelHandlerContext) {
        headStarts()
        context.fireChannelActive()
    }

    func channelInactive(context: ChannelHandlerContext) {
        timer?.cancel()
        context.fireChannelInactive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if awaitingHead && !headStarted { headStarts() }
        context.fireChannelRead(data)
    }

    func headArrived() {
        awaitingHead = false
        headStarted = false
        timer?.set(nil)
    }

    func responseEnded() {
        awaitingHead = true
    }

    private func headStarts() {
        headStarted = true
        timer?.expire(in: headerReadTimeout)
    }
}
