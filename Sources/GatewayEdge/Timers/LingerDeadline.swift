import NIOCore

/// The timing of a lingering close, as nginx's `lingering_timeout` and `lingering_time`: after
/// its last response a closing connection reads and drops what the client still sends until
/// the client has been silent for ``silence``, or ``total`` has passed since it began.
///
/// Timing the silence rather than the whole lets a large upload that was answered early (a
/// `413`) finish arriving however slowly it moves: closing with unread input makes the kernel
/// answer with a reset, which can destroy the answer before the client has read it. Holds no
/// timer and reads no clock; the connection handler owns both.
package struct LingerDeadline {
    package static let silence = TimeAmount.seconds(5)
    package static let total = TimeAmount.seconds(30)

    /// When lingering ends whatever the client sends; nil until it begins.
    private var ends: NIODeadline?

    package init() {}

    /// The response is out and the output closed: lingering begins.
    package mutating func started(now: NIODeadline) -> DeadlineTimer.Change {
        let ends = now + Self.total
        self.ends = ends
        return .expire(at: min(now + Self.silence, ends))
    }

    /// The client sent more: the silence starts again, within the total.
    package func bytesRead(now: NIODeadline) -> DeadlineTimer.Change {
        guard let ends else { return .keep }
        return .expire(at: min(now + Self.silence, ends))
    }
}
