import GatewayEdge
import NIOCore
import Synchronization

/// What lets a listener's graceful shutdown wait for its connections without a suspended task
/// per connection. Hummingbird's server runs a task per accepted connection and waits for
/// them all before it stops; a task waiting for its connection to close costs about 1.6 KiB,
/// more than an idle connection's whole budget. So connections are counted as they open, one
/// connection's task stays and waits until none is open, and the others' tasks end at once:
/// the server still waits for every connection, through that one (docs/DECISIONS.md, "Idle
/// connections without a task").
final class ConnectionDrain: Sendable {
    private struct State {
        var open = 0
        /// A task is waiting for `open` to reach zero.
        var waiting = false
        var waiter: CheckedContinuation<Void, Never>?
    }

    private let state = Mutex(State())

    /// Counts `channel` until it closes; then, when `releasesMemory`, tells ``ReleasedMemory``
    /// (one callback per connection for both).
    func opened(_ channel: any Channel, releasesMemory: Bool) {
        state.withLock { $0.open += 1 }
        channel.closeFuture.whenComplete { _ in
            self.closed()
            if releasesMemory { ReleasedMemory.shared.connectionReleased() }
        }
    }

    /// Whether a task waits for the listener's connections.
    var isWaited: Bool { state.withLock { $0.waiter != nil } }

    /// Returns at once when a task already waits for the listener's connections; otherwise the
    /// caller becomes that task, and returns once no connection is open.
    func waitUnlessWaited() async {
        let waits = state.withLock { state in
            if state.waiting || state.open == 0 { return false }
            state.waiting = true
            return true
        }
        guard waits else { return }
        await withCheckedContinuation { continuation in
            let resumeNow = state.withLock { state in
                if state.open == 0 {
                    state.waiting = false
                    return true
                }
                state.waiter = continuation
                return false
            }
            if resumeNow { continuation.resume() }
        }
    }

    private func closed() {
        let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
            state.open -= 1
            guard state.open == 0, let waiter = state.waiter else { return nil }
            state.waiter = nil
            state.waiting = false
            return waiter
        }
        waiter?.resume()
    }
}
