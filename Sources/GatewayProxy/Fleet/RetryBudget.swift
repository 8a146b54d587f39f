import Synchronization

/// How many retries a route may make: every request earns a fifth of one, a retry spends a
/// whole one, so over time retries stay at most 20% of the route's requests (Finagle's retry
/// budget, without its clock). Up to ``cap`` unspent retries are kept, so the burst of
/// requests that fail together when an instance dies can all be retried; a new route starts
/// with ``initial``, so a quiet route retries too. When a service keeps failing, the budget is
/// soon spent and each failed request is answered instead of being sent `attempts` + 1 times.
/// Lock-free: one atomic add per request.
package final class RetryBudget: Sendable {
    /// In thousandths of a retry.
    package static let earnedPerRequest = 200
    package static let cap = 100 * 1000
    package static let initial = 10 * 1000

    private let balance = Atomic<Int>(RetryBudget.initial)

    package init() {}

    /// A request of the route started.
    package func deposit() {
        guard balance.load(ordering: .relaxed) < Self.cap else { return }
        balance.add(Self.earnedPerRequest, ordering: .relaxed)
    }

    /// Takes one retry if the budget holds one.
    package func withdraw() -> Bool {
        var current = balance.load(ordering: .relaxed)
        while current >= 1000 {
            let (exchanged, original) = balance.compareExchange(expected: current, desired: current - 1000, ordering: .relaxed)
            if exchanged { return true }
            current = original
        }
        return false
    }

    /// Unspent retries, whole.
    package var available: Int { balance.load(ordering: .relaxed) / 1000 }
}
