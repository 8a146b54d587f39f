import GatewayObservability
import NIOCore
import NIOPosix

/// A connection handler whose written output may wait for the end of its event loop's pass.
package protocol PassFlushable: AnyObject {
    /// Whether the handler waits in its loop's ``PassFlushes``; a handler leaving its pipeline
    /// while it waits flushes at once (``flushAtPassEnd()``).
    var passFlushPending: Bool { get set }
    /// Flushes what was written since the last flush (nothing, when the handler has left its
    /// pipeline meanwhile).
    func flushAtPassEnd()
}

extension PassFlushable {
    /// For `handlerRemoved`: a flush still waiting for the pass happens now, while the handler
    /// still has its context.
    package func flushIfPending(_ context: ChannelHandlerContext) {
        guard passFlushPending else { return }
        passFlushPending = false
        context.flush()
    }
}

/// Flushes held until the event loop has handled everything that woke it: the requests and
/// answers of all the connections that were ready in one pass leave back to back, so a peer
/// asleep in `epoll_wait` (an upstream, a client) is woken once for the lot instead of once
/// per request (docs/DECISIONS.md, "Writes flushed at the end of the loop's pass").
package final class PassFlushes: @unchecked Sendable {
    private var pending: [any PassFlushable] = []
    /// The list being flushed, kept to reuse its storage.
    private var flushing: [any PassFlushable] = []
    private var scheduled = false

    /// One list per event-loop thread, touched only by that thread.
    private static let perLoop = ThreadSpecificVariable<PassFlushes>()

    /// Flushes `handler` at the end of `loop`'s pass; called on `loop`. Only NIO's own loops
    /// run passes: on any other (a test's embedded loop) the flush happens at once.
    package static func flush(_ handler: any PassFlushable, on loop: any EventLoop) {
        guard !handler.passFlushPending else { return }
        guard MultiThreadedEventLoopGroup.currentEventLoop != nil else {
            handler.flushAtPassEnd()
            return
        }
        let flushes = perLoop.currentValue(madeBy: PassFlushes.init)
        handler.passFlushPending = true
        flushes.pending.append(handler)
        guard !flushes.scheduled else { return }
        flushes.scheduled = true
        let bound = NIOLoopBound(flushes, eventLoop: loop)
        // A task runs after the pass's I/O events, before the loop waits again.
        loop.execute { bound.value.run() }
    }

    private func run() {
        scheduled = false
        swap(&pending, &flushing)
        for handler in flushing where handler.passFlushPending {
            handler.passFlushPending = false
            handler.flushAtPassEnd()
        }
        flushing.removeAll(keepingCapacity: true)
    }
}
