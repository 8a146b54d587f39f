import NIOCore

/// One keep-alive HTTP/1.1 connection to an upstream, used by one exchange at a time (the
/// pool hands it out exclusively) on the event loop of the client connection it serves.
package final class UpstreamConnection: Sendable {
    package let channel: any Channel
    private let handler: NIOLoopBound<UpstreamResponseHandler>

    package init(channel: any Channel, handler: UpstreamResponseHandler) {
        self.channel = channel
        self.handler = NIOLoopBound(handler, eventLoop: channel.eventLoop)
    }

    package var eventLoop: any EventLoop { channel.eventLoop }

    /// The handler itself, for code running on the connection's loop; traps anywhere else.
    package var handlerOnLoop: UpstreamResponseHandler { handler.value }

    /// Closes the connection; its sink, if any, is detached without being told.
    package func abort(_ error: UpstreamError) {
        if eventLoop.inEventLoop {
            handler.value.abort(error)
        } else {
            eventLoop.execute { self.handler.value.abort(error) }
        }
    }
}
