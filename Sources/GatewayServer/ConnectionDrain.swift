import NIOCore
import Synchronization

/// A listener's open connections, for its graceful shutdown: every accepted connection is held
/// here until it closes, so the drain can tell each one to wind down
/// (`ChannelShouldQuiesceEvent`: HTTP/1.1 answers `Connection: close`, HTTP/2 sends `GOAWAY`,
/// WebSockets `1001`) and wait until none is open. No task waits per connection
/// (docs/DECISIONS.md, "Idle connections without a task").
///
/// A connection accepted while the drain is under way (the listener still accepts for a moment
/// after handing its port over, ``GatewayListener``) is told as soon as its HTTP handlers are in
/// place (``ready(_:)``): over TLS that is after the handshake, before which no handler could
/// act on it.
final class ConnectionDrain: Sendable {
    private struct State {
        var open: [ObjectIdentifier: any Channel] = [:]
        var draining = false
        var waiters: [CheckedContinuation<Void, Never>] = []
    }

    private let state = Mutex(State())

    /// Holds `channel` until it closes.
    func opened(_ channel: any Channel) {
        let id = ObjectIdentifier(channel)
        state.withLock { $0.open[id] = channel }
        channel.closeFuture.whenComplete { _ in self.closed(id) }
    }

    /// `channel`'s HTTP handlers are in place: told at once when the drain began before.
    func ready(_ channel: any Channel) {
        if state.withLock({ $0.draining }) { Self.tell(channel) }
    }

    /// Whether the drain has begun.
    var isDraining: Bool { state.withLock { $0.draining } }

    /// Tells every open connection to wind down, and every one accepted from now on.
    func begin() {
        let channels = state.withLock { state -> [any Channel] in
            guard !state.draining else { return [] }
            state.draining = true
            return Array(state.open.values)
        }
        for channel in channels { Self.tell(channel) }
    }

    /// Returns once no connection is open.
    func allClosed() async {
        await withCheckedContinuation { continuation in
            let closedAlready = state.withLock { state in
                if state.open.isEmpty { return true }
                state.waiters.append(continuation)
                return false
            }
            if closedAlready { continuation.resume() }
        }
    }

    /// Closes every open connection at once: the drain ran out of time.
    func closeAll() {
        for channel in state.withLock({ Array($0.open.values) }) { channel.close(promise: nil) }
    }

    private static func tell(_ channel: any Channel) {
        channel.pipeline.fireUserInboundEventTriggered(ChannelShouldQuiesceEvent())
    }

    private func closed(_ id: ObjectIdentifier) {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.open[id] = nil
            guard state.open.isEmpty else { return [] }
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.resume() }
    }
}
