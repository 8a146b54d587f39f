import Testing

@testable import GatewayProxy

/// One loop's share of an upstream pool: connection attempts bounded, made for the queue
/// rather than for one exchange, and never wasted on exchanges that went away.
@Suite("Upstream pool: idle connections, attempts and waiting exchanges")
struct UpstreamPoolStateTests {
    typealias State = UpstreamPoolState<String>

    private static func ticket(_ acquired: State.Acquired) -> (ticket: Int, connect: Bool)? {
        if case .wait(let ticket, let connect) = acquired { return (ticket, connect) }
        return nil
    }

    @Test func attemptsAreBoundedAndEachServesTheOldestWaiter() throws {
        var state = State(maxConnecting: 2, maxIdle: 10)
        let waits = (0..<5).compactMap { _ in Self.ticket(state.acquire { _ in true }) }
        #expect(waits.map(\.connect) == [true, true, false, false, false])
        #expect(state.connecting == 2)
        // Each new connection goes to the oldest waiter and frees a slot for the next.
        let first = state.connected("a")
        #expect(first.offered == .toWaiter(ticket: waits[0].ticket))
        #expect(first.connectMore == 1)
        // A released connection also goes to a waiter before the idle list.
        let released = state.offer("b")
        #expect(released == .toWaiter(ticket: waits[1].ticket))
        #expect(state.waiting == waits[2...].map(\.ticket))
    }

    @Test func waitersThatLeaveCostNoFurtherAttemptsAndTheirConnectionsAreKept() throws {
        var state = State(maxConnecting: 4, maxIdle: 10)
        // Streams reset while waiting: each leaves; the attempt made for the first of them
        // serves the later arrivals instead of a new attempt per arrival.
        var attempts = 0
        for _ in 0..<100 {
            let wait = try #require(Self.ticket(state.acquire { _ in true }))
            if wait.connect { attempts += 1 }
            let left = state.leave(wait.ticket)
            #expect(left)
        }
        #expect(attempts == 1)
        let made = state.connected("a")
        #expect(made.offered == .kept)
        #expect(made.connectMore == 0)
        guard case .idle("a") = state.acquire(usable: { _ in true }) else {
            Issue.record("the connection made for a waiter that left was not kept")
            return
        }
    }

    @Test func aFailedAttemptFailsTheOldestWaiterAndTheOthersGetAttempts() throws {
        var state = State(maxConnecting: 1, maxIdle: 10)
        let waits = (0..<3).compactMap { _ in Self.ticket(state.acquire { _ in true }) }
        let failed = state.connectFailed()
        #expect(failed.failed == waits[0].ticket)
        #expect(failed.connectMore == 1)
        #expect(state.connecting == 1)
        let leftAgain = state.leave(waits[0].ticket)
        #expect(!leftAgain)
    }

    @Test func idleConnectionsBeyondTheLimitAreClosedAndUnusableOnesSkipped() {
        var state = State(maxConnecting: 1, maxIdle: 2)
        let offered = ["a", "b", "c"].map { state.offer($0) }
        #expect(offered == [.kept, .kept, .close])
        guard case .idle("a") = state.acquire(usable: { $0 != "b" }) else {
            Issue.record("a closed idle connection was handed out")
            return
        }
        #expect(state.idle.isEmpty)
    }
}
