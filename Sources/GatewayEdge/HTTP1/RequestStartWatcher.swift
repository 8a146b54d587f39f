import NIOCore

/// The first handler of a connection, in front of the HTTP decoder: it sees the raw bytes, so
/// it knows when a request *starts* arriving, which the decoder only reports once the whole
/// head is in. ``HTTP1ConnectionHandler`` (after the decoder) tells it when a head arrived
/// and when a response ended; it closes a connection whose head is not complete within
/// `headerReadTimeout` (the rules are ``HeadReadDeadline``'s).
///
/// Its timer is a ``DeadlineTimer``: on a busy keep-alive connection it fires once per
/// `headerReadTimeout`, not once per request.
package final class RequestStartWatcher: ChannelInboundHandler, RemovableChannelHandler {
    package typealias InboundIn = ByteBuffer
    package typealias InboundOut = ByteBuffer

    private var deadline: HeadReadDeadline
    private var timer: DeadlineTimer?
    private var context: ChannelHandlerContext?

    package init(headerReadTimeout: TimeAmount) {
        deadline = HeadReadDeadline(timeout: headerReadTimeout)
    }

    package func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        // A strong reference, let go of when the timer is cancelled (``DeadlineTimer``).
        let timer = DeadlineTimer(eventLoop: context.eventLoop) {
            self.context?.close(promise: nil)
        }
        self.timer = timer
        if context.channel.isActive { timer.apply(deadline.connectionOpened(now: timer.now)) }
    }

    package func handlerRemoved(context: ChannelHandlerContext) {
        timer?.cancel()
        self.context = nil
    }

    package func channelActive(context: ChannelHandlerContext) {
        if let timer { timer.apply(deadline.connectionOpened(now: timer.now)) }
        context.fireChannelActive()
    }

    package func channelInactive(context: ChannelHandlerContext) {
        timer?.cancel()
        context.fireChannelInactive()
    }

    package func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if let timer { timer.apply(deadline.bytesRead(now: timer.now)) }
        context.fireChannelRead(data)
    }

    package func headArrived() {
        let change = deadline.headArrived()
        timer?.apply(change)
    }

    package func requestEnded() {
        deadline.requestEnded()
    }

    package func responseEnded() {
        if let timer { timer.apply(deadline.responseEnded(now: timer.now)) }
    }
}
