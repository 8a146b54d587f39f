import GatewayPrimitives
import NIOCore

/// The timing of `server.body_read_timeout` for the request body being read on a connection,
/// as a state machine that is told what happened and returns what to do. It holds no timer
/// and reads no clock, so it is tested without sockets or waiting; ``RequestEdge``
/// wraps it for every protocol, and its callers own the timer and the response.
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
/// Its deadline is kept by the handler's ``DeadlineTimer``, which arms lazily: a connection
/// sending many bodies does not set and cancel a timer per request or per read.
package struct BodyReadDeadline {
    package enum Limit: Equatable {
        /// Proxied routes: each wait for more of the body.
        case betweenReads
        /// The gateway's own endpoints: the whole body, from its head.
        case wholeBody

        /// How the body of a request a route takes (`proxied`) is timed: between reads; the
        /// gateway's own endpoints' (and every body on a listener without routes, the admin
        /// one) as a whole.
        package init(proxied: Bool) {
            self = proxied ? .betweenReads : .wholeBody
        }

        /// How the body of a request for `target` is timed (``init(proxied:)``).
        package static func of(target: String, proxiedRoutes: (any ProxiedPaths)?) -> Limit {
            guard let proxiedRoutes else { return .wholeBody }
            return Limit(proxied: proxiedRoutes.takes(RequestPath.path(ofTarget: target)))
        }
    }

    private enum State: Equatable {
        /// No request body is being read.
        case idle
        /// `waiting`: the gateway asked for input and has not had it yet.
        case reading(limit: Limit, deadline: NIODeadline, waiting: Bool)
    }

    package let timeout: TimeAmount
    private var state = State.idle

    package init(timeout: TimeAmount) {
        self.timeout = timeout
    }

    /// A request head arrived; `hasBody` when it declares one.
    package mutating func headRead(hasBody: Bool, limit: Limit, now: NIODeadline) -> DeadlineTimer.Change {
        guard hasBody else { return .keep }
        let deadline = now + timeout
        state = .reading(limit: limit, deadline: deadline, waiting: true)
        return .expire(at: deadline)
    }

    /// Part of the body arrived: the next wait starts when the gateway asks for more. Until
    /// then only a whole-body deadline runs.
    package mutating func bodyRead() -> DeadlineTimer.Change {
        guard case .reading(let limit, let deadline, _) = state else { return .keep }
        state = .reading(limit: limit, deadline: deadline, waiting: false)
        return limit == .betweenReads ? .clear : .keep
    }

    /// The gateway asks for more input (a `read` went out through the pipeline).
    package mutating func readRequested(now: NIODeadline) -> DeadlineTimer.Change {
        guard case .reading(let limit, var deadline, let waiting) = state, !waiting else { return .keep }
        if limit == .betweenReads { deadline = now + timeout }
        state = .reading(limit: limit, deadline: deadline, waiting: true)
        return .expire(at: deadline)
    }

    /// The gateway asks for more of a body still coming, the first time or again: the first ask
    /// times it like a head (``headRead(hasBody:limit:now:)``), later ones are
    /// ``readRequested(now:)``. For callers that start timing a body only once they ask for it.
    package mutating func bodyWanted(limit: Limit, now: NIODeadline) -> DeadlineTimer.Change {
        guard case .reading = state else { return headRead(hasBody: true, limit: limit, now: now) }
        return readRequested(now: now)
    }

    /// The body's end arrived (or the connection is done with it).
    package mutating func bodyEnded() -> DeadlineTimer.Change {
        guard state != .idle else { return .keep }
        state = .idle
        return .clear
    }

    /// The deadline last returned passed. True when the body did not arrive in time: answer
    /// `408` if nothing was sent yet, and close.
    package mutating func deadlinePassed() -> Bool {
        guard case .reading(let limit, _, let waiting) = state, waiting || limit == .wholeBody else { return false }
        state = .idle
        return true
    }
}
