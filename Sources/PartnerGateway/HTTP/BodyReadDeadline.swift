import NIOCore

/// The timing of `server.body_read_timeout` for the request body being read on a connection,
/// as a state machine that is told what happened and returns what to do. It holds no timer
/// and reads no clock, so it is tested without sockets or waiting; ``ClientProtectionHandler``
/// owns the timer and the answer.
///
/// Two limits, because the two kinds of request differ:
/// - a proxied route's body may be large and slow, so only the wait between two reads is
///   limited (nginx's `client_body_timeout`): an upload that keeps moving keeps going;
/// - the gateway's own endpoints take small JSON bodies, which must arrive whole within the
///   timeout of their head, so a body trickled a byte at a time cannot hold a connection
///   either.
///
/// A wait only counts while the gateway is asking for input. When it stops reading (the
/// upstream takes the body more slowly than the client sends it), the client is not the one
/// stalling, and the clock starts again when the gateway asks for more.
///
/// The timer is armed lazily: at most one is outstanding, and when it fires early the
/// machine names the next deadline, so a connection sending many bodies does not set and
/// cancel a timer per request.
struct BodyReadDeadline {
    enum Limit: Equatable {
        /// Proxied routes: each wait for more of the body.
        case betweenReads
        /// The gateway's own endpoints: the whole body, from its head.
        case wholeBody
    }

    enum Action: Equatable {
        case none
        /// Schedule the (single) timer for this deadline; call ``timerFired(now:)`` then.
        case armTimer(NIODeadline)
        /// The body did not arrive in time: answer `408` if nothing was sent yet, and close.
        case timedOut
    }

    private enum State: Equatable {
        /// No request body is being read.
        case idle
        /// `waiting`: the gateway asked for input and has not had it yet.
        case reading(limit: Limit, deadline: NIODeadline, waiting: Bool)
    }

    let timeout: TimeAmount
    private var state = State.idle
    private var timerArmed = false

    init(timeout: TimeAmount) {
        self.timeout = timeout
    }

    /// A request head arrived; `hasBody` when it declares one.
    mutating func headRead(hasBody: Bool, limit: Limit, now: NIODeadline) -> Action {
        guard hasBody else { return .none }
        let deadline = now + timeout
        state = .reading(limit: limit, deadline: deadline, waiting: true)
        return arm(deadline)
    }

    /// Part of the body arrived: the next wait starts when the gateway asks for more.
    mutating func bodyRead() {
        guard case .reading(let limit, let deadline, _) = state else { return }
        state = .reading(limit: limit, deadline: deadline, waiting: false)
    }

    /// The gateway asks for more input (a `read` went out through the pipeline).
    mutating func readRequested(now: NIODeadline) -> Action {
        guard case .reading(let limit, var deadline, let waiting) = state, !waiting else { return .none }
        if limit == .betweenReads { deadline = now + timeout }
        state = .reading(limit: limit, deadline: deadline, waiting: true)
        return arm(deadline)
    }

    /// The body's end arrived (or the connection is done with it).
    mutating func bodyEnded() {
        state = .idle
    }

    /// The timer set for an ``Action/armTimer(_:)`` fired.
    mutating func timerFired(now: NIODeadline) -> Action {
        timerArmed = false
        guard case .reading(let limit, let deadline, let waiting) = state else { return .none }
        // Not waiting on the client: the next read request arms the timer again, unless the
        // whole body is limited (its deadline does not move).
        guard waiting || limit == .wholeBody else { return .none }
        if now >= deadline {
            state = .idle
            return .timedOut
        }
        return arm(deadline)
    }

    private mutating func arm(_ deadline: NIODeadline) -> Action {
        guard !timerArmed else { return .none }
        timerArmed = true
        return .armTimer(deadline)
    }
}
