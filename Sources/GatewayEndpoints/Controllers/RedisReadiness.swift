import RedisClient
import Synchronization

/// Whether the gateway can use Redis, from what it already tracks: the invalidation
/// subscription (confirmed by Redis, then a heartbeat `PING` on its own connection every
/// 500 ms, ``RedisSubscriber``) and, on a cluster, whether every slot has a primary in the
/// map the pool keeps.
///
/// `/readyz` reads it and sends Redis nothing: a probe costs no round trip, and a flood of
/// probes is not a flood of `PING`s. A Redis that stops answering is noticed within about a
/// second (the heartbeat), one that comes back once the subscription is made again.
package final class RedisReadiness: Sendable {
    enum Subscription: String, Sendable {
        /// Not reported yet: the first moments after start-up.
        case unknown
        case up
        case down
    }

    private let state = Mutex(Subscription.unknown)
    private let cluster: RedisCluster?

    package init(cluster: RedisCluster?) {
        self.cluster = cluster
    }

    /// The invalidation subscriber's report.
    package func subscriptionChanged(up: Bool) {
        state.withLock { $0 = up ? .up : .down }
    }

    var subscription: Subscription { state.withLock { $0 } }

    /// Slots no primary serves (on a cluster; always 0 otherwise).
    var uncoveredSlots: Int { cluster?.uncoveredSlots ?? 0 }

    package var isReady: Bool { subscription == .up && uncoveredSlots == 0 }

    /// ``isReady``; while nothing is known yet (just after start-up) it waits up to `limit`
    /// for the subscription's first outcome rather than answer a healthy gateway `503`.
    func isReady(waitingUpTo limit: Duration) async -> Bool {
        let deadline = ContinuousClock.now + limit
        while subscription == .unknown && ContinuousClock.now < deadline {
            do {
                try await Task.sleep(for: .milliseconds(10))
            } catch {
                break
            }
        }
        return isReady
    }
}
