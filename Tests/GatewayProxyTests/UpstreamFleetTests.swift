import GatewayConfiguration
@testable import GatewayProxy
import NIOCore
import Synchronization
import Testing

/// The fleet's decisions without sockets: balancers, consistent hashing, outlier ejection on a
/// test clock, the retry budget.
@Suite struct UpstreamFleetTests {
    /// A deterministic generator, so random choices are the same on every run.
    struct SplitMix: RandomNumberGenerator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9e37_79b9_7f4a_7c15
            return RendezvousHash.mix(state)
        }
    }

    final class TestClock: Sendable {
        private let now = Mutex(NIODeadline.uptimeNanoseconds(1_000_000_000))
        func read() -> NIODeadline { now.withLock { $0 } }
        func advance(_ amount: TimeAmount) { now.withLock { $0 = $0 + amount } }
    }

    static func fleet(
        weights: [Int], balance: UpstreamFleet.Balance = .roundRobin, failures: Int = 3, ejection: String = "10s",
        percent: Int = 50, clock: TestClock = TestClock()
    ) -> UpstreamFleet {
        let targets = weights.enumerated().map { index, weight in
            UpstreamTarget(
                index: index, url: "http://127.0.0.1:\(9001 + index)", authority: "127.0.0.1:\(9001 + index)", weight: weight,
                pool: UpstreamPool(host: "127.0.0.1", port: 9001 + index)
            )
        }
        var outlier = GatewayConfig.Route.Outlier()
        outlier.consecutiveFailures = failures
        outlier.ejectionTime = ConfigDuration(ejection)!
        outlier.maxEjectedPercent = percent
        return UpstreamFleet(targets: targets, balance: balance, outlier: outlier, retries: 2, healthCheck: nil, clock: { clock.read() })
    }

    static func counts(_ fleet: UpstreamFleet, picks: Int, caller: (Int) -> String? = { _ in nil }) -> [Int] {
        var counts = Array(repeating: 0, count: fleet.targets.count)
        for pick in 0..<picks {
            let target = fleet.pick(caller: caller(pick))!
            counts[target.index] += 1
            fleet.finished(target, .answered(status: 200))
        }
        return counts
    }

    // MARK: Balancers

    @Test func roundRobinSplitsEvenly() {
        let counts = Self.counts(Self.fleet(weights: [1, 1, 1]), picks: 300)
        #expect(counts.allSatisfy { (90...110).contains($0) }, "\(counts)")
    }

    @Test func roundRobinFollowsWeightsSmoothly() {
        var rotation = SmoothRoundRobin(weights: [1, 2])
        let first = (0..<6).map { _ in rotation.next(of: .all(2))! }
        #expect(first == [1, 0, 1, 1, 0, 1])
        let counts = Self.counts(Self.fleet(weights: [1, 2]), picks: 300)
        #expect(counts == [100, 200])
    }

    /// A target out of the rotation neither gains nor loses turns.
    @Test func roundRobinSkipsIneligibleTargets() {
        var rotation = SmoothRoundRobin(weights: [1, 1, 1])
        var eligible = TargetSet.all(3)
        eligible.remove(1)
        let picks = (0..<4).map { _ in rotation.next(of: eligible)! }
        #expect(picks.sorted() == [0, 0, 2, 2])
        #expect(rotation.next(of: TargetSet()) == nil)
    }

    @Test func leastRequestPrefersTheLessLoaded() {
        var generator = SplitMix(state: 7)
        let load = [10, 0, 0]
        var counts = [0, 0, 0]
        for _ in 0..<300 {
            counts[LeastRequestChoice.pick(of: .all(3), weights: [1, 1, 1], load: { load[$0] }, using: &generator)!] += 1
        }
        // The loaded target wins no draw: every pair with it has an idle target.
        #expect(counts[0] == 0)
        #expect(counts[1] > 100 && counts[2] > 100, "\(counts)")
    }

    @Test func leastRequestSplitsEvenlyWhenIdle() {
        let counts = Self.counts(Self.fleet(weights: [1, 1, 1], balance: .leastRequest), picks: 300)
        #expect(counts.allSatisfy { (70...130).contains($0) }, "\(counts)")
        let fleet = Self.fleet(weights: [1, 1, 1], balance: .leastRequest)
        let busy = fleet.pick(caller: nil)!
        #expect(busy.inFlight.load(ordering: .relaxed) == 1)
        fleet.finished(busy, .answered(status: 200))
        #expect(busy.inFlight.load(ordering: .relaxed) == 0)
    }

    @Test func hashUserKeepsEachCallerOnOneTarget() {
        let fleet = Self.fleet(weights: [1, 1, 1], balance: .hashUser)
        for user in 0..<20 {
            let picks = Set((0..<10).map { _ in fleet.pick(caller: "user-\(user)")!.index })
            #expect(picks.count == 1)
        }
        let counts = Self.counts(fleet, picks: 3000) { "user-\($0)" }
        #expect(counts.allSatisfy { (850...1150).contains($0) }, "\(counts)")
    }

    @Test func hashUserFollowsWeights() {
        let counts = Self.counts(Self.fleet(weights: [1, 2], balance: .hashUser), picks: 3000) { "user-\($0)" }
        #expect((850...1150).contains(counts[0]), "\(counts)")
    }

    /// Removing a target moves only its callers; the others keep theirs.
    @Test func hashUserMovesOnlyTheRemovedTargetsCallers() {
        let hashes = (0..<3).map { RendezvousHash.hash("http://127.0.0.1:\(9001 + $0)") }
        var without1 = TargetSet.all(3)
        without1.remove(1)
        var moved = 0
        for user in 0..<1000 {
            let key = RendezvousHash.hash("user-\(user)")
            let before = RendezvousHash.pick(key: key, of: .all(3), targetHashes: hashes, weights: [1, 1, 1])!
            let after = RendezvousHash.pick(key: key, of: without1, targetHashes: hashes, weights: [1, 1, 1])!
            if before == 1 {
                moved += 1
                #expect(after != 1)
            } else {
                #expect(after == before)
            }
        }
        #expect((250...420).contains(moved), "\(moved)")
        // Fixed, not seeded per process: every gateway instance agrees.
        #expect(RendezvousHash.hash("user-1") == RendezvousHash.hash("user-1"))
        #expect(RendezvousHash.hash("") == RendezvousHash.mix(0xcbf2_9ce4_8422_2325))
    }

    @Test func retriesExcludeTriedTargets() {
        let fleet = Self.fleet(weights: [1, 1, 1])
        var tried = TargetSet()
        for _ in 0..<3 {
            tried.insert(fleet.pick(caller: nil, excluding: tried)!.index)
        }
        #expect(tried == .all(3))
        #expect(fleet.pick(caller: nil, excluding: tried) == nil)
    }

    // MARK: Outlier ejection

    @Test func consecutiveFailuresEjectForTheEjectionTime() {
        let start = NIODeadline.uptimeNanoseconds(0)
        var state = OutlierState(count: 4, threshold: 3, ejectionTime: .seconds(10), maxEjectedPercent: 50)
        #expect(state.failed(0, now: start) == nil)
        #expect(state.failed(0, now: start) == nil)
        state.succeeded(0)
        #expect(state.failed(0, now: start) == nil)
        #expect(state.failed(0, now: start) == nil)
        #expect(state.failed(0, now: start) == start + .seconds(10))
        #expect(state.isEjected(0, now: start + .seconds(9)))
        #expect(!state.isEjected(0, now: start + .seconds(10)))
        // Ejected again soon after: twice as long.
        let back = start + .seconds(10)
        for _ in 0..<2 { #expect(state.failed(0, now: back) == nil) }
        #expect(state.failed(0, now: back) == back + .seconds(20))
        // Back for longer than it was out: one ejection's time again.
        let later = back + .seconds(60)
        for _ in 0..<2 { _ = state.failed(0, now: later) }
        #expect(state.failed(0, now: later) == later + .seconds(10))
    }

    @Test func ejectionGrowsAtMostTenfold() {
        var now = NIODeadline.uptimeNanoseconds(0)
        var state = OutlierState(count: 2, threshold: 1, ejectionTime: .seconds(1), maxEjectedPercent: 50)
        var last: TimeAmount = .zero
        for _ in 0..<15 {
            let until = state.failed(0, now: now)!
            last = until - now
            now = until
        }
        #expect(last == .seconds(10))
    }

    @Test func ejectionsAreCappedByPercent() {
        let now = NIODeadline.uptimeNanoseconds(0)
        var state = OutlierState(count: 4, threshold: 1, ejectionTime: .seconds(10), maxEjectedPercent: 50)
        #expect(state.maxEjected == 2)
        #expect(state.failed(0, now: now) != nil)
        #expect(state.failed(1, now: now) != nil)
        #expect(state.failed(2, now: now) == nil)
        #expect(state.ejected(now: now) == TargetSet(bits: 0b11))
        // Any percent lets one target out; a fleet of one never ejects.
        #expect(OutlierState(count: 3, threshold: 1, ejectionTime: .seconds(1), maxEjectedPercent: 10).maxEjected == 1)
        #expect(OutlierState(count: 3, threshold: 1, ejectionTime: .seconds(1), maxEjectedPercent: 0).maxEjected == 0)
        var single = OutlierState(count: 1, threshold: 1, ejectionTime: .seconds(1), maxEjectedPercent: 100)
        #expect(single.failed(0, now: now) == nil)
    }

    /// On the fleet: an ejected target gets no requests until its time is up.
    @Test func fleetSkipsEjectedTargetsUntilTheyReturn() {
        let clock = TestClock()
        let fleet = Self.fleet(weights: [1, 1, 1], failures: 2, ejection: "10s", clock: clock)
        let sick = fleet.targets[1]
        #expect(!fleet.finished(sick, .failed))
        fleet.finished(fleet.targets[0], .answered(status: 200))
        #expect(fleet.finished(sick, .answered(status: 503)))
        #expect(!fleet.isAvailable(1))
        #expect(Self.counts(fleet, picks: 30)[1] == 0)
        clock.advance(.seconds(10))
        #expect(fleet.isAvailable(1))
        #expect(Self.counts(fleet, picks: 30)[1] == 10)
    }

    /// A dead target is out after exactly `consecutive_failures` failed tries: the ones before
    /// it take requests (and fail them), none after it does.
    @Test func aDeadTargetTakesExactlyThresholdFailuresBeforeItIsOut() {
        let fleet = Self.fleet(weights: [1, 1, 1], failures: 5)
        var failures = 0
        for _ in 0..<60 {
            let target = fleet.pick(caller: nil)!
            if target.index == 2 {
                failures += 1
                fleet.finished(target, .failed)
            } else {
                fleet.finished(target, .answered(status: 200))
            }
        }
        #expect(failures == 5)
        #expect(!fleet.isAvailable(2))
    }

    /// A target out both ways (ejected, then failing its checks) is back as soon as its checks
    /// pass `healthy` times in a row, not when its ejection time is up.
    @Test func aHealthyVerdictEndsAnEjection() {
        let clock = TestClock()
        let fleet = Self.fleet(weights: [1, 1], failures: 1, ejection: "300s", clock: clock)
        #expect(fleet.finished(fleet.targets[1], .failed))
        #expect(fleet.setHealthy(1, false))
        #expect(!fleet.isAvailable(1))
        clock.advance(.seconds(1))
        #expect(fleet.setHealthy(1, true))
        #expect(fleet.isAvailable(1))
        #expect(Self.counts(fleet, picks: 10)[1] == 5)
    }

    @Test func successBetweenFailuresKeepsATargetIn() {
        let fleet = Self.fleet(weights: [1, 1], failures: 2)
        for _ in 0..<10 {
            fleet.finished(fleet.targets[0], .failed)
            fleet.finished(fleet.targets[0], .answered(status: 404))
        }
        fleet.finished(fleet.targets[0], .neutral)
        #expect(fleet.isAvailable(0))
    }

    @Test func unhealthyTargetsAreSkippedAndNoneLeftIsNil() {
        let fleet = Self.fleet(weights: [1, 1])
        #expect(fleet.setHealthy(0, false))
        #expect(!fleet.setHealthy(0, false))
        #expect(Self.counts(fleet, picks: 10) == [0, 10])
        fleet.setHealthy(1, false)
        #expect(fleet.pick(caller: nil) == nil)
        fleet.setHealthy(0, true)
        #expect(fleet.pick(caller: nil)?.index == 0)
    }

    // MARK: Active health checks

    @Test func healthVerdictNeedsThresholdsInARow() {
        var verdict = HealthVerdict(healthy: 2, unhealthy: 3)
        #expect(verdict.isHealthy, "targets start healthy")
        // false, false, true (ends the run), then three in a row: out on the last.
        let out = [false, false, true, false, false, false].map { verdict.record(passed: $0) }
        #expect(out == [false, false, false, false, false, true])
        #expect(!verdict.isHealthy)
        let back = [true, false, true, true].map { verdict.record(passed: $0) }
        #expect(back == [false, false, false, true])
        #expect(verdict.isHealthy)
    }

    // MARK: The retry budget

    @Test func retryBudgetIsAFifthOfTheRequests() {
        let budget = RetryBudget()
        #expect(budget.available == 10, "a new route starts with some")
        #expect((0..<10).allSatisfy { _ in budget.withdraw() })
        #expect(!budget.withdraw())
        // 100 requests earn 20 retries, no more.
        for _ in 0..<100 { budget.deposit() }
        #expect((0..<20).allSatisfy { _ in budget.withdraw() })
        #expect(!budget.withdraw())
        // Unspent retries are kept up to the cap.
        for _ in 0..<10_000 { budget.deposit() }
        #expect(budget.available == 100)
    }

    @Test func aSingleTargetsRetriesNeedNoBudget() {
        let fleet = Self.fleet(weights: [1])
        #expect((0..<100).allSatisfy { _ in fleet.retryAllowed() })
        let pair = Self.fleet(weights: [1, 1])
        #expect((0..<10).allSatisfy { _ in pair.retryAllowed() })
        #expect(!pair.retryAllowed())
        for _ in 0..<5 { pair.requestStarted() }
        #expect(pair.retryAllowed())
    }
}
