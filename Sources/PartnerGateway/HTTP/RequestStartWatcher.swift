import NIOCore

/// The first handler of a connection, in front of the HTTP decoder: it sees the raw bytes, so
/// it knows when a request *starts* arriving, which the decoder only reports once the whole
/// head is in. ``ClientProtectionHandler`` (after the decoder) tells it when a head arrived
/// and when a response ended; it closes a connection whose head is not complete within
/// `headerReadTimeout` of the connection opening or of the request's first byte.
///
/// The timer is armed lazily and moved on only when it fires early: on a busy keep-alive
/// connection it fires once per `headerReadTimeout`, not once per request (a timer set and
/// cancelled for every request showed in profiles of the proxy path).
final class RequestStartWatcher: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer

    private let headerReadTimeout: TimeAmount
    private var context: ChannelHandlerContext?
    private var timer: Scheduled<Void>?
    /// Between a response's end and the next request's head: bytes now start a request.
    private var awaitingHead = true
    /// When the head being waited for started (its first byte, or the connection opening).
    private var headStarted: NIODeadline?

    init(headerReadTimeout: TimeAmount) {
        self.headerReadTimeout = headerReadTimeout
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        // The first request's clock starts with the connection: a client that connects and
        // sends nothing is a slow-header client too.
        if context.channel.isActive { headStarts() }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        timer?.cancel()
        timer = nil
        self.context = nil
    }

    func channelActive(context: ChannelHandlerContext) {
        headStarts()
        context.fireChannelActive()
    }

    func channelInactive(context: ChannelHandlerContext) {
        timer?.cancel()
        timer = nil
        context.fireChannelInactive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if awaitingHead && headStarted == nil { headStarts() }
        context.fireChannelRead(data)
    }

    func headArrived() {
        awaitingHead = false
        headStarted = nil
    }

    func responseEnded() {
        awaitingHead = true
    }

    private func headStarts() {
        let started = NIODeadline.now()
        headStarted = started
        if timer == nil { arm(at: started + headerReadTimeout) }
    }

    private func arm(at deadline: NIODeadline) {
        guard let context else { return }
        timer = context.eventLoop.assumeIsolated().scheduleTask(deadline: deadline) { [weak self] in
            guard let self else { return }
            self.timer = nil
            // No head under way: the next request's first byte arms the timer again.
            guard self.awaitingHead, let started = self.headStarted else { return }
            let due = started + self.headerReadTimeout
            if NIODeadline.now() >= due {
                self.context?.close(promise: nil)
            } else {
                self.arm(at: due)
            }
        }
    }
}
