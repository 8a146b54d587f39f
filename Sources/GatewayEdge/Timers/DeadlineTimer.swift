import NIOCore

/// A deadline on an event loop that moves far more often than it expires: the idle timeout,
/// the header read timeout and the route timeout move on with every request or every read.
///
/// Scheduling and cancelling a task each time the deadline moves would cost more than the
/// forwarding around it, so the task is armed lazily and moved only when the deadline comes
/// earlier than it: when it fires before the current deadline it re-arms itself for that
/// deadline, and when the deadline was cleared it does nothing. On a busy keep-alive connection a timer then fires about once per
/// timeout, not once per request.
///
/// Time is the event loop's own (`EventLoop.now`), so tests drive it with an embedded loop's
/// clock instead of waiting. Used only on its event loop; the owner makes it in
/// `handlerAdded` and cancels it when the handler goes.
///
/// No weak references, either way: the armed task holds the timer until it runs or is
/// cancelled, and the timer holds `onExpiry` (which may hold its owner) until ``cancel()``. A
/// weak reference gives the object it points at a side table, and every retain and release of
/// that object then takes the Swift runtime's slow path, which NIO's pipeline would hit many
/// times per request on a channel handler or its context.
package final class DeadlineTimer {
    private let eventLoop: any EventLoop
    /// Dropped by ``cancel()``, which breaks the cycle through an owner it holds.
    private var onExpiry: (() -> Void)?
    /// When the owner wants to be told, or nil when it does not.
    package private(set) var deadline: NIODeadline?
    private var scheduled: Scheduled<Void>?
    private var scheduledFor = NIODeadline.distantFuture

    /// `onExpiry` runs on the loop once `deadline` has passed; it may hold its owner strongly
    /// as long as the owner calls ``cancel()`` when it goes.
    package init(eventLoop: any EventLoop, onExpiry: @escaping () -> Void) {
        self.eventLoop = eventLoop
        self.onExpiry = onExpiry
    }

    /// What a handler's state machine wants done with its deadline: the machines read no
    /// clock and hold no timer, they return one of these and the handler applies it.
    package enum Change: Equatable {
        case keep
        case expire(at: NIODeadline)
        case clear
    }

    /// The loop's current time.
    package var now: NIODeadline { eventLoop.now }

    package func apply(_ change: Change) {
        switch change {
        case .keep: break
        case .expire(let deadline): set(deadline)
        case .clear: set(nil)
        }
    }

    /// Expires `timeout` from now.
    package func expire(in timeout: TimeAmount) {
        set(eventLoop.now + timeout)
    }

    /// Moves the deadline; nil clears it (a task already armed then fires and does nothing).
    package func set(_ deadline: NIODeadline?) {
        self.deadline = deadline
        guard let deadline else { return }
        if scheduled == nil || scheduledFor > deadline {
            scheduled?.cancel()
            arm(for: deadline)
        }
    }

    /// Clears the deadline and the armed task, and lets go of `onExpiry`: the owner is going
    /// away, and the timer never fires again.
    package func cancel() {
        deadline = nil
        scheduled?.cancel()
        scheduled = nil
        onExpiry = nil
    }

    private func arm(for deadline: NIODeadline) {
        scheduledFor = deadline
        scheduled = eventLoop.assumeIsolated().scheduleTask(deadline: deadline) {
            self.fired()
        }
    }

    private func fired() {
        scheduled = nil
        guard let deadline else { return }
        if eventLoop.now >= deadline {
            self.deadline = nil
            onExpiry?()
        } else {
            arm(for: deadline)
        }
    }
}
