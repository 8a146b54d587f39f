@testable import GatewayEndpoints
import RedisClient
import Testing

/// ``RedisReadiness``: what `/readyz` answers from, without Redis.
@Suite("Readiness from tracked state (in memory)")
struct RedisReadinessTests {
    @Test func followsTheSubscriptionAndWaitsOnlyWhileNothingIsKnown() async {
        let readiness = RedisReadiness(cluster: nil)
        #expect(readiness.subscription == .unknown)
        let clock = ContinuousClock()
        let started = clock.now
        #expect(await readiness.isReady(waitingUpTo: .milliseconds(50)) == false)
        #expect(clock.now - started >= .milliseconds(50), "gave up before the start-up wait")

        readiness.subscriptionChanged(up: true)
        #expect(await readiness.isReady(waitingUpTo: .seconds(30)))
        readiness.subscriptionChanged(up: false)
        let down = clock.now
        #expect(await readiness.isReady(waitingUpTo: .seconds(30)) == false)
        #expect(clock.now - down < .seconds(1), "waited although the subscription is known to be down")
    }

    @Test func aClusterWithoutAPrimaryForEverySlotIsNotReady() {
        let cluster = RedisCluster(seeds: [RedisNodeAddress(host: "127.0.0.1", port: 7000)])
        let readiness = RedisReadiness(cluster: cluster)
        readiness.subscriptionChanged(up: true)
        #expect(readiness.uncoveredSlots == 16384)
        #expect(!readiness.isReady)
    }
}
