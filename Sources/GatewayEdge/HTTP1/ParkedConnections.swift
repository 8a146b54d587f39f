import NIOCore

/// The parked connections of one event loop (``ConnectionParking``), in the order they were
/// parked, with the deadline of each one's idle timeout: one task on the loop, armed for the
/// earliest deadline, closes those whose time has come. A connection that wakes or closes
/// leaves its entry behind, recognised as stale by its ``RequestStartWatcher/parkings``
/// count, and dropped when its time comes. Used only on its event loop.
package final class ParkedConnections: @unchecked Sendable {
    private struct Entry {
        let deadline: NIODeadline
        let watcher: RequestStartWatcher
        let parking: UInt32
    }

    package let eventLoop: any EventLoop
    package let handlers: any ParkableHandlers
    /// Deadlines never decrease along it: the idle timeout is the listener's, and a deadline
    /// earlier than the last one is moved up to it (closing a moment late, never early).
    private var entries = CircularBuffer<Entry>()
    private var scheduled: Scheduled<Void>?

    init(eventLoop: any EventLoop, handlers: any ParkableHandlers) {
        self.eventLoop = eventLoop
        self.handlers = handlers
    }

    /// How many entries wait, stale ones included (for tests).
    package var count: Int { entries.count }

    /// `watcher`'s connection is parked until `deadline` (its idle timeout).
    func add(_ watcher: RequestStartWatcher, parking: UInt32, deadline: NIODeadline) {
        let deadline = max(deadline, entries.last?.deadline ?? deadline)
        entries.append(Entry(deadline: deadline, watcher: watcher, parking: parking))
        if scheduled == nil { arm() }
    }

    private func arm() {
        guard let first = entries.first else { return }
        scheduled = eventLoop.assumeIsolated().scheduleTask(deadline: first.deadline) {
            self.fired()
        }
    }

    private func fired() {
        scheduled = nil
        let now = eventLoop.now
        while let first = entries.first, first.deadline <= now {
            entries.removeFirst()
            first.watcher.idleDeadlinePassed(parking: first.parking)
        }
        arm()
    }
}
