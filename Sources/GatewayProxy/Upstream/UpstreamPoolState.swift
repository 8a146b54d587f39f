/// One event loop's share of an ``UpstreamPool``: its idle connections, the connection attempts
/// under way and the exchanges waiting for a connection, in order. It decides; the pool does
/// what it says (connects, hands over, closes), so the rules are tested in memory.
///
/// Connections are not made for an exchange but for the queue: a new one goes to the exchange
/// that has waited longest, or to the idle list when none waits any more. So an exchange that
/// goes away while waiting (its stream reset) leaves its attempt to serve the next one instead
/// of opening one more, and at most ``maxConnecting`` attempts are ever under way.
package struct UpstreamPoolState<Connection> {
    /// Attempts under way at once; exchanges beyond them wait for one to finish.
    package let maxConnecting: Int
    /// Idle connections kept; more are closed when released.
    package let maxIdle: Int
    package private(set) var idle: [Connection] = []
    package private(set) var connecting = 0
    /// Waiting exchanges' tickets, oldest first.
    package private(set) var waiting: [Int] = []
    private var lastTicket = 0

    package init(maxConnecting: Int, maxIdle: Int) {
        self.maxConnecting = maxConnecting
        self.maxIdle = maxIdle
    }

    package enum Acquired {
        case idle(Connection)
        /// Wait with this ticket; `connect`: start one more attempt.
        case wait(ticket: Int, connect: Bool)
    }

    /// A connection for an exchange: an idle one that is still `usable`, or a place in the queue.
    package mutating func acquire(usable: (Connection) -> Bool) -> Acquired {
        while let candidate = idle.popLast() {
            if usable(candidate) { return .idle(candidate) }
        }
        lastTicket &+= 1
        waiting.append(lastTicket)
        let connect = connecting < waiting.count && connecting < maxConnecting
        if connect { connecting += 1 }
        return .wait(ticket: lastTicket, connect: connect)
    }

    package enum Offered: Equatable {
        case toWaiter(ticket: Int)
        case kept
        case close
    }

    /// A connection is free (released after use, or newly made): to the oldest waiter first.
    package mutating func offer(_ connection: Connection) -> Offered {
        if !waiting.isEmpty { return .toWaiter(ticket: waiting.removeFirst()) }
        guard idle.count < maxIdle else { return .close }
        idle.append(connection)
        return .kept
    }

    /// An attempt made `connection`; then start `connectMore` attempts.
    package mutating func connected(_ connection: Connection) -> (offered: Offered, connectMore: Int) {
        connecting -= 1
        let offered = offer(connection)
        return (offered, attemptsWanted())
    }

    /// An attempt failed: the oldest waiter fails with it (the upstream is likely down, and
    /// it waited longest); then start `connectMore` attempts for the others.
    package mutating func connectFailed() -> (failed: Int?, connectMore: Int) {
        connecting -= 1
        let failed = waiting.isEmpty ? nil : waiting.removeFirst()
        return (failed, attemptsWanted())
    }

    /// The waiter gave up (its exchange ended, or its wait timed out); false if it was no
    /// longer waiting.
    package mutating func leave(_ ticket: Int) -> Bool {
        guard let index = waiting.firstIndex(of: ticket) else { return false }
        waiting.remove(at: index)
        return true
    }

    /// Attempts to add so that each waiter has one under way, within the limit.
    private mutating func attemptsWanted() -> Int {
        let wanted = max(0, min(waiting.count, maxConnecting) - connecting)
        connecting += wanted
        return wanted
    }
}

extension UpstreamPoolState: Sendable where Connection: Sendable {}
