import NIOCore

/// The timing of `server.header_read_timeout` on a connection, as a state machine that is
/// told what happened and returns what to do with the deadline: a request head must arrive
/// whole within the timeout of the connection opening (the first request: a client that
/// connects and sends nothing is a slow-header client too) or of the request's first byte
/// (later requests on a keep-alive connection). ``RequestStartWatcher`` sees the bytes and
/// owns the timer; ``ClientProtectionHandler`` tells it when a head arrived and a response
/// ended.
///
/// Between a head and the end of its response no head is awaited: bytes then are the body
/// or pipelined requests, and the next clock starts with the first bytes read after the
/// response ended.
struct HeadReadDeadline {
    private enum State: Equatable {
        /// A response is under way: bytes do not start a request.
        case answering
        /// Between a response's end and the next request's first byte.
        case awaitingFirstByte
        /// The head has started arriving and must be complete by `deadline`.
        case awaitingHead(deadline: NIODeadline)
    }

    let timeout: TimeAmount
    private var state = State.awaitingFirstByte

    init(timeout: TimeAmount) {
        self.timeout = timeout
    }

    /// The connection opened: the first head's clock starts now.
    mutating func connectionOpened(now: NIODeadline) -> DeadlineTimer.Change {
        headStarts(now: now)
    }

    /// Bytes arrived.
    mutating func bytesRead(now: NIODeadline) -> DeadlineTimer.Change {
        guard state == .awaitingFirstByte else { return .keep }
        return headStarts(now: now)
    }

    /// A whole head arrived (or was refused): no head is awaited until its response ends.
    mutating func headArrived() -> DeadlineTimer.Change {
        state = .answering
        return .clear
    }

    /// The response ended: the next bytes start the next request.
    mutating func responseEnded() {
        if state == .answering { state = .awaitingFirstByte }
    }

    private mutating func headStarts(now: NIODeadline) -> DeadlineTimer.Change {
        let deadline = now + timeout
        state = .awaitingHead(deadline: deadline)
        return .expire(at: deadline)
    }
}
