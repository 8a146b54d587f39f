import GatewayConfiguration
import GatewayObservability
import NIOCore
import NIOPosix
import Synchronization

/// A route's targets and what decides which one a request goes to: the balancer, passive
/// outlier ejection, active health (``UpstreamHealthChecks``) and the retry budget.
///
/// The request path takes no lock: which targets are out is one atomic word, the round-robin
/// rotation is kept per thread (event loop), in-flight counts are atomics. The lock is taken
/// only when a target failed, an ejection ends, or a health check changes its verdict.
package final class UpstreamFleet: Sendable {
    package typealias Balance = GatewayConfig.Route.Balance

    /// How a try with a target ended, as far as its health is concerned.
    package enum Outcome: Sendable, Equatable {
        /// A response; `5xx` counts as a failure.
        case answered(status: Int)
        /// Connection refused or reset, a malformed answer.
        case failed
        /// Says nothing about the target (a timeout, the client leaving, the request's own fault).
        case neutral
    }

    package let targets: [UpstreamTarget]
    package let balance: Balance
    /// Further tries a failed request may have.
    package let attempts: Int
    package let healthCheck: GatewayConfig.Route.HealthCheck?
    private let weights: [Int]
    private let targetHashes: [UInt64]
    private let all: TargetSet
    private let clock: @Sendable () -> NIODeadline

    /// Targets ejected or unhealthy: the request path reads only this.
    private let excluded = Atomic<UInt64>(0)
    /// When the next ejected target comes back (uptime nanoseconds; `.max`: none out).
    private let nextReturn = Atomic<UInt64>(.max)
    /// Targets with failures counted since their last success (skips the lock on success).
    private let failing = Atomic<UInt64>(0)
    private let state: Mutex<State>
    private let rotation = ThreadSpecificVariable<Rotation>()
    private let retryBudget = RetryBudget()

    private struct State: Sendable {
        var outlier: OutlierState
        var unhealthy = TargetSet()
    }

    /// One thread's round-robin rotation; used only on that thread.
    private final class Rotation: @unchecked Sendable {
        var rotation: SmoothRoundRobin
        init(_ rotation: SmoothRoundRobin) { self.rotation = rotation }
    }

    package init(
        targets: [UpstreamTarget], balance: Balance, outlier: GatewayConfig.Route.Outlier, retries: Int,
        healthCheck: GatewayConfig.Route.HealthCheck?, clock: @escaping @Sendable () -> NIODeadline = { .now() }
    ) {
        // None: a route with `upstream: none`, which no request is proxied on.
        precondition((0...64).contains(targets.count), "a fleet has 0...64 targets")
        self.targets = targets
        self.balance = balance
        attempts = retries
        self.healthCheck = healthCheck
        weights = targets.map(\.weight)
        targetHashes = targets.map { RendezvousHash.hash($0.url) }
        all = .all(targets.count)
        self.clock = clock
        state = Mutex(State(outlier: OutlierState(
            count: targets.count, threshold: outlier.consecutiveFailures,
            ejectionTime: TimeAmount(outlier.ejectionTime.duration), maxEjectedPercent: outlier.maxEjectedPercent
        )))
    }

    package var isSingle: Bool { targets.count == 1 }

    // MARK: Picking

    /// The targets a request may go to now.
    package func available() -> TargetSet {
        var out = excluded.load(ordering: .relaxed)
        if out != 0, clock().uptimeNanoseconds >= nextReturn.load(ordering: .relaxed) {
            out = state.withLock { refresh(&$0) }
        }
        return TargetSet(bits: all.bits & ~out)
    }

    /// The target for a request (a try), none of `tried`; `caller` is the user or partner id
    /// for `hash_user`. Nil: no target is left. Counts the request in flight on it until
    /// ``finished(_:_:)``.
    package func pick(caller: String?, excluding tried: TargetSet = TargetSet()) -> UpstreamTarget? {
        let eligible = available().subtracting(tried)
        guard !eligible.isEmpty else { return nil }
        if isSingle { return targets[0] }
        let index: Int?
        switch balance {
        case .roundRobin:
            index = nextInRotation(of: eligible)
        case .leastRequest:
            var generator = SystemRandomNumberGenerator()
            index = LeastRequestChoice.pick(of: eligible, weights: weights, load: { self.targets[$0].inFlight.load(ordering: .relaxed) }, using: &generator)
        case .hashUser:
            if let caller {
                index = RendezvousHash.pick(key: RendezvousHash.hash(caller), of: eligible, targetHashes: targetHashes, weights: weights)
            } else {
                index = nextInRotation(of: eligible)
            }
        }
        guard let index else { return nil }
        let target = targets[index]
        if balance == .leastRequest { target.inFlight.add(1, ordering: .relaxed) }
        return target
    }

    private func nextInRotation(of eligible: TargetSet) -> Int? {
        rotation.currentValue(madeBy: { Rotation(SmoothRoundRobin(weights: weights)) }).rotation.next(of: eligible)
    }

    // MARK: Outcomes

    /// A try with `target` ended. Returns whether this ejected the target.
    @discardableResult
    package func finished(_ target: UpstreamTarget, _ outcome: Outcome) -> Bool {
        if balance == .leastRequest, !isSingle { target.inFlight.subtract(1, ordering: .relaxed) }
        let failed: Bool
        switch outcome {
        case .answered(let status): failed = status >= 500
        case .failed: failed = true
        case .neutral: return false
        }
        guard !isSingle else { return false }
        let bit = UInt64(1) << UInt64(target.index)
        if !failed {
            guard failing.load(ordering: .relaxed) & bit != 0 else { return false }
            state.withLock { state in
                state.outlier.succeeded(target.index)
                failing.bitwiseAnd(~bit, ordering: .relaxed)
            }
            return false
        }
        return state.withLock { state in
            failing.bitwiseOr(bit, ordering: .relaxed)
            guard state.outlier.failed(target.index, now: clock()) != nil else { return false }
            failing.bitwiseAnd(~bit, ordering: .relaxed)
            refresh(&state)
            return true
        }
    }

    /// An active check's verdict on target `index`. Returns whether it changed. A verdict of
    /// healthy also ends a passive ejection (``OutlierState/returned(_:)``).
    @discardableResult
    package func setHealthy(_ index: Int, _ healthy: Bool) -> Bool {
        state.withLock { state in
            guard state.unhealthy.contains(index) == healthy else { return false }
            if healthy {
                state.unhealthy.remove(index)
                state.outlier.returned(index)
            } else {
                state.unhealthy.insert(index)
            }
            refresh(&state)
            return true
        }
    }

    /// Whether target `index` takes requests now (neither ejected nor unhealthy).
    package func isAvailable(_ index: Int) -> Bool {
        available().contains(index)
    }

    /// Publishes which targets are out, for the request path.
    @discardableResult
    private func refresh(_ state: inout State) -> UInt64 {
        let now = clock()
        let out = state.outlier.ejected(now: now).bits | state.unhealthy.bits
        excluded.store(out, ordering: .relaxed)
        nextReturn.store(state.outlier.nextReturn(now: now)?.uptimeNanoseconds ?? .max, ordering: .relaxed)
        return out
    }

    // MARK: The retry budget

    /// A request of the route is under way: it earns the route a fifth of a retry (on fleets of
    /// several; a single target retries only a stale connection, as before).
    package func requestStarted() {
        if !isSingle { retryBudget.deposit() }
    }

    /// Whether a request may be tried again now (``RetryBudget``).
    package func retryAllowed() -> Bool {
        isSingle || retryBudget.withdraw()
    }
}
