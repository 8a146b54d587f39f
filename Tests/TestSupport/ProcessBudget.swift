import Foundation
import Synchronization

/// How many tests that start real processes (redis-server, gateways, upstreams) run at once
/// in this test process.
///
/// Swift Testing starts every test at once by default. A test of this project starts between
/// one and a dozen processes, so the whole suite at once meant hundreds of processes on a
/// 2-core machine: Redis commands missed their 2 s timeout and bounds such as "503 within
/// 350 ms" failed for lack of CPU, not for a fault in the gateway. The budget lets
/// ``slots`` such tests run together; a test whose assertions are wall-clock bounds takes the
/// whole budget and runs alone among them. Tests that start nothing (in-memory channels, a
/// test clock) do not take part.
///
/// Waiters are served lightest first, each weight in arrival order: Swift Testing starts
/// every test at once, so the `.realProcesses` tests run together first and then the tests
/// that take the whole budget one after another, instead of each of those holding back every
/// lighter test queued behind it.
public final class ProcessBudget: Sendable {
    /// The budget of this test process.
    public static let shared = ProcessBudget(slots: max(2, 2 * ProcessInfo.processInfo.activeProcessorCount))

    public let slots: Int

    private struct Waiter {
        let weight: Int
        let continuation: CheckedContinuation<Void, Never>
    }

    private struct State {
        var free: Int
        var waiters: [Waiter] = []
    }

    private let state: Mutex<State>

    public init(slots: Int) {
        self.slots = slots
        state = Mutex(State(free: slots))
    }

    /// Runs `body` holding `weight` slots (at most ``slots``), waiting for them first.
    public func run<Result: Sendable>(weight: Int, _ body: () async throws -> Result) async rethrows -> Result {
        let weight = min(max(1, weight), slots)
        await acquire(weight)
        defer { release(weight) }
        return try await body()
    }

    private func acquire(_ weight: Int) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let granted = state.withLock { state -> Bool in
                let place = state.waiters.firstIndex { $0.weight > weight } ?? state.waiters.endIndex
                if place == 0 && state.free >= weight {
                    state.free -= weight
                    return true
                }
                state.waiters.insert(Waiter(weight: weight, continuation: continuation), at: place)
                return false
            }
            if granted { continuation.resume() }
        }
    }

    private func release(_ weight: Int) {
        let ready = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.free += weight
            var ready: [CheckedContinuation<Void, Never>] = []
            while let first = state.waiters.first, first.weight <= state.free {
                state.free -= first.weight
                ready.append(state.waiters.removeFirst().continuation)
            }
            return ready
        }
        for continuation in ready { continuation.resume() }
    }
}
