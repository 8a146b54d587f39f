import NIOCore

/// The timing of `server.header_read_timeout` on a connection, as a state machine that is
/// told what happened and returns what to do with the deadline: a request head must arrive
/// whole within the timeout of the connection opening (the first request: a client that
/// connects and sends nothing is a slow-header client too) or of the request's first byte
/// (later requests on a keep-alive connection). ``RequestStartWatcher`` sees the bytes and
/// owns the timer; ``HTTP1ConnectionHandler`` tells it when a head arrived, when its request
/// ended and when its response ended.
///
/// Between a head and the end of its response no head is awaited: bytes then are the body
/// or pipelined requests (whose reading may be held back while the response is under way), and
/// the next clock starts with the first bytes read after the response ended. Bytes read after
/// the request's end, in a later read, are the next request already started: a client that
/// had the whole response may send before the response's end has passed through the pipeline
/// (an endpoint's response ends in a write of its own), so its clock starts when the response
/// ends rather than never.
package struct HeadReadDeadline {
    private enum State: Equatable {
        /// A response is under way: bytes do not start a request.
        case answering
        /// Between a response's end and the next request's first byte.
        case awaitingFirstByte
        /// The head has started arriving and must be complete by `deadline`.
        case awaitingHead(deadline: NIODeadline)
        /// The connection is closing (a lingering close): bytes are the rest of an answered
        /// request, never a new one.
        case closing
    }

    package let timeout: TimeAmount
    private var state = State.awaitingFirstByte
    /// While answering: the request's end has been read.
    private var requestComplete = false
    /// While answering: bytes arrived in a read after the request's end.
    private var nextRequestStarted = false

    package init(timeout: TimeAmount) {
        self.timeout = timeout
    }

    /// Whether nothing was read since the last response ended.
    package var awaitsFirstByte: Bool { state == .awaitingFirstByte }

    /// The connection opened: the first head's clock starts now.
    package mutating func connectionOpened(now: NIODeadline) -> DeadlineTimer.Change {
        headStarts(now: now)
    }

    /// Bytes arrived.
    package mutating func bytesRead(now: NIODeadline) -> DeadlineTimer.Change {
        if state == .answering, requestComplete { nextRequestStarted = true }
        guard state == .awaitingFirstByte else { return .keep }
        return headStarts(now: now)
    }

    /// A whole head arrived (or was refused): no head is awaited until its response ends.
    package mutating func headArrived() -> DeadlineTimer.Change {
        state = .answering
        requestComplete = false
        nextRequestStarted = false
        return .clear
    }

    /// The request being answered has been read to its end.
    package mutating func requestEnded() {
        if state == .answering { requestComplete = true }
    }

    /// The response ended: the next bytes start the next request, or have started it.
    package mutating func responseEnded(now: NIODeadline) -> DeadlineTimer.Change {
        guard state == .answering else { return .keep }
        if nextRequestStarted { return headStarts(now: now) }
        state = .awaitingFirstByte
        return .keep
    }

    /// The connection closes lingering: no head is awaited any more (the lingering close
    /// has its own deadline).
    package mutating func connectionClosing() -> DeadlineTimer.Change {
        state = .closing
        return .clear
    }

    private mutating func headStarts(now: NIODeadline) -> DeadlineTimer.Change {
        let deadline = now + timeout
        state = .awaitingHead(deadline: deadline)
        return .expire(at: deadline)
    }
}
