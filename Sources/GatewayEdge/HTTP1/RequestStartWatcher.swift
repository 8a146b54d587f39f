import NIOCore

/// The first handler of a connection, in front of the HTTP parser: it sees the raw bytes, so
/// it knows when a request *starts* arriving, which the parser only reports once the whole
/// head is in. ``HTTP1ConnectionHandler`` (which runs the parser) tells it when a head arrived
/// and when a response ended; it closes a connection whose head is not complete within
/// `headerReadTimeout` (the rules are ``HeadReadDeadline``'s).
///
/// Its timer is a ``DeadlineTimer``: on a busy keep-alive connection it fires once per
/// `headerReadTimeout`, not once per request.
///
/// It is also what is left of a parked connection (``ConnectionParking``): the one handler
/// that stays, it puts the HTTP handlers back at the next byte read and when the listener drains
/// (the connection handler then closes it gracefully), and closes the connection at its idle
/// timeout (``ParkedConnections``) or when the client stops sending, as the connection handler
/// would with nothing outstanding.
package final class RequestStartWatcher: ChannelInboundHandler, RemovableChannelHandler {
    package typealias InboundIn = ByteBuffer
    package typealias InboundOut = ByteBuffer

    private var deadline: HeadReadDeadline
    private var timer: DeadlineTimer?
    private var context: ChannelHandlerContext?
    /// Where the connection is parked, while it is.
    private var lot: ParkedConnections?
    /// How many times the connection was parked: an entry of an earlier parking is stale.
    package private(set) var parkings: UInt32 = 0
    /// Whether its connection may park (``allowsParking``): only then are the bytes looked at.
    private let parks: Bool
    /// The last four bytes read, the latest in the lowest byte.
    private var lastBytes: UInt32 = 0

    /// Whether the connection is parked.
    package var isParked: Bool { lot != nil }

    /// Whether it is in a pipeline (a connection handler put back after a parking finds it there).
    package var isAdded: Bool { context != nil }

    package init(headerReadTimeout: TimeAmount, parks: Bool = false) {
        deadline = HeadReadDeadline(timeout: headerReadTimeout)
        self.parks = parks
    }

    package func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        let timer = makeTimer(on: context.eventLoop)
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
        leaveLot()
        context.fireChannelInactive()
    }

    package func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if let lot, !unpark(context, handlers: lot.handlers) { return }
        if let timer { timer.apply(deadline.bytesRead(now: timer.now)) }
        if parks { noteLastBytes(of: unwrapInboundIn(data)) }
        context.fireChannelRead(data)
    }

    private func noteLastBytes(of bytes: ByteBuffer) {
        let count = bytes.readableBytes
        if count >= 4 {
            lastBytes = bytes.getInteger(at: bytes.writerIndex - 4, as: UInt32.self) ?? 0
        } else {
            for index in bytes.readerIndex..<bytes.writerIndex {
                lastBytes = lastBytes << 8 | UInt32(bytes.getInteger(at: index, as: UInt8.self) ?? 0)
            }
        }
    }

    /// Whether the connection may be parked as far as the bytes read tell: none since the
    /// last response ended, and the last ones ended a head (`CRLF CRLF`), so the parser holds
    /// no part of a next request. A read that ended a body cannot tell (it may have carried
    /// the start of the next head too), so a connection waits for a bodiless request to park.
    package var allowsParking: Bool {
        parks && deadline.awaitsFirstByte && lastBytes == 0x0D0A_0D0A
    }

    package func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if let lot, event is ChannelShouldQuiesceEvent {
            // The listener drains: the connection's handlers come back to wait for a request
            // its client may be sending already (the drain's grace), as an idle one does.
            guard unpark(context, handlers: lot.handlers) else { return }
        } else if isParked, event as? ChannelEvent == .inputClosed {
            context.close(promise: nil)
        }
        context.fireUserInboundEventTriggered(event)
    }

    // MARK: Parking

    /// The connection handler found the connection idle (``ConnectionParking``) and is about
    /// to remove the HTTP handlers: hold the connection until `idleDeadline` (none: until the
    /// client sends or closes). No timer is kept meanwhile.
    package func park(in lot: ParkedConnections, idleDeadline: NIODeadline?) {
        guard context != nil, !isParked else { return }
        timer?.cancel()
        timer = nil
        parkings &+= 1
        self.lot = lot
        if let idleDeadline { lot.add(self, parking: parkings, deadline: idleDeadline) }
    }

    /// The idle deadline of parking number `parking` passed: close if the connection is still
    /// parked from it.
    func idleDeadlinePassed(parking: UInt32) {
        guard isParked, parking == parkings else { return }
        context?.close(promise: nil)
    }

    /// The client sent again: the HTTP handlers go back in, after this one. False if they
    /// could not (the connection is closed).
    private func unpark(_ context: ChannelHandlerContext, handlers: any ParkableHandlers) -> Bool {
        leaveLot()
        makeTimer(on: context.eventLoop)
        do {
            try handlers.addRequestHandlers(to: context.pipeline.syncOperations, watcher: self)
            return true
        } catch {
            context.close(promise: nil)
            return false
        }
    }

    /// Leaves the lot: its entry (if any) is stale from now on.
    private func leaveLot() {
        guard isParked else { return }
        lot = nil
        parkings &+= 1
    }

    @discardableResult
    private func makeTimer(on eventLoop: any EventLoop) -> DeadlineTimer {
        // A strong reference, let go of when the timer is cancelled (``DeadlineTimer``).
        let timer = DeadlineTimer(eventLoop: eventLoop) {
            self.context?.close(promise: nil)
        }
        self.timer = timer
        return timer
    }

    package func headArrived() {
        let change = deadline.headArrived()
        timer?.apply(change)
    }

    package func requestEnded() {
        deadline.requestEnded()
    }

    /// The connection closes lingering: what it still reads starts no request.
    package func connectionClosing() {
        timer?.apply(deadline.connectionClosing())
    }

    package func responseEnded() {
        if let timer { timer.apply(deadline.responseEnded(now: timer.now)) }
    }
}
