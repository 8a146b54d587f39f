import NIOCore

/// The `stream_idle_timeout` rule of an upgraded connection: it closes once nothing went
/// either way for the timeout (a ping or a pong is traffic like any frame). Activity only
/// notes the instant; the one timer is moved when it fires early, so a busy connection costs
/// no timer work per read.
package struct StreamIdleDeadline {
    package enum Verdict: Equatable {
        /// Silent for the whole timeout: close.
        case expired
        /// Traffic since the timer was set: look again at this instant.
        case later(NIODeadline)
    }

    package let timeout: TimeAmount
    private var lastActivity: NIODeadline

    /// Starts timing at `now`; the first deadline is ``firstDeadline``.
    package init(timeout: TimeAmount, now: NIODeadline) {
        self.timeout = timeout
        lastActivity = now
    }

    package var firstDeadline: NIODeadline { lastActivity + timeout }

    /// Bytes went one way or the other at `now`.
    package mutating func activity(at now: NIODeadline) {
        lastActivity = now
    }

    /// The timer set for the last deadline fired at `now`.
    package func deadlinePassed(now: NIODeadline) -> Verdict {
        let due = lastActivity + timeout
        return now >= due ? .expired : .later(due)
    }
}
