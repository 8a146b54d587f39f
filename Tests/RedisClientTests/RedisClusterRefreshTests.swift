import Synchronization
import Testing
import TestSupport

@testable import RedisClient

/// How often ``RedisCluster`` reads its slot map again: at most once per interval however many
/// `MOVED` replies ask, and never dropping a request that the interval held back.
struct RedisClusterRefreshTests {
    /// Counts the reads; each returns an empty map (the reads' content is not the point).
    final class Reads: Sendable {
        private let count = Mutex(0)
        var done: Int { count.withLock { $0 } }
        @Sendable func read() async throws -> RedisClusterSlotMap {
            count.withLock { $0 += 1 }
            return RedisClusterSlotMap()
        }
    }

    @Test func aRefreshAskedForTooSoonAfterAReadIsMadeOnceTheIntervalHasPassed() async throws {
        let interval = Duration.seconds(1)
        let cluster = RedisCluster(seeds: [], minimumRefreshInterval: interval)
        let reads = Reads()
        let beforeRead = ContinuousClock.now
        _ = try await cluster.slotMap(read: reads.read)
        #expect(reads.done == 1)
        // Three MOVED replies right after the read: one more read, after the interval.
        for _ in 0..<3 { cluster.refresh(read: reads.read) }
        // A machine stalled past the interval here makes the first call read at once and hold
        // the others back for one more read: right too, but not the case this test is about.
        guard ContinuousClock.now - beforeRead < interval else { return }
        #expect(reads.done == 1, "the interval was not kept")
        try await eventually(timeout: .seconds(5)) { reads.done == 2 }
        try await Task.sleep(for: interval + .milliseconds(200))
        #expect(reads.done == 2, "one held-back request was read more than once")
    }
}
