import Foundation
import Logging
import RedisClient
import Synchronization

/// Counts calls per key, per day and outcome in memory and adds them to Redis in batches, at
/// most once a second (``flush()``): counting costs a request no Redis round trip.
///
/// The counts live in shards chosen by the key id, so requests on different event loops rarely
/// wait for one another's lock. Each day of a key is one Redis hash,
/// `pg:usage:{<key_id>}:<YYYY-MM-DD>` (``UsageReport``), incremented with pipelined `HINCRBY`
/// and set to expire `retention` days after that day. What was counted since the last flush is
/// lost when the process dies (at most one second's calls of this instance). A flush that
/// fails is kept and sent again with the next one; one that failed after Redis applied part of
/// it counts that part twice (errs towards counting, never drops).
public final class UsageCounter: Sendable {
    private struct Tally {
        var day = ""
        var dayEnd = Date.distantPast
        var counts: [Entry: Int] = [:]
    }

    struct Entry: Hashable {
        let keyID: String
        let day: String
        let outcome: UsageOutcome
    }

    private final class Shard: Sendable {
        let tally = Mutex(Tally())
    }

    private let shards: [Shard]
    private let calendar: QuotaCalendar
    private let retentionDays: Int
    private let redis: RedisConnectionPool
    private let logger: Logger

    public init(redis: RedisConnectionPool, calendar: QuotaCalendar, retentionDays: Int, logger: Logger) {
        self.redis = redis
        self.calendar = calendar
        self.retentionDays = retentionDays
        self.logger = logger
        shards = (0..<16).map { _ in Shard() }
    }

    /// Counts one call of `keyID` ending as `outcome` (and as `also`, when given: an admitted
    /// call's response class, under the same lock), today.
    public func record(keyID: String, _ outcome: UsageOutcome, also: UsageOutcome? = nil, now: Date = Date()) {
        var hasher = Hasher()
        hasher.combine(keyID)
        let shard = shards[Int(UInt(bitPattern: hasher.finalize()) % UInt(shards.count))]
        shard.tally.withLock { tally in
            // The day's name is worked out once a day per shard, not per call.
            if now >= tally.dayEnd || now < tally.dayEnd.addingTimeInterval(-172_800) {
                let window = calendar.window(.day, containing: now)
                tally.day = window.label
                tally.dayEnd = window.end
            }
            tally.counts[Entry(keyID: keyID, day: tally.day, outcome: outcome), default: 0] += 1
            if let also { tally.counts[Entry(keyID: keyID, day: tally.day, outcome: also), default: 0] += 1 }
        }
    }

    /// Takes every count so far.
    func drain() -> [Entry: Int] {
        var all: [Entry: Int] = [:]
        for shard in shards {
            let counts = shard.tally.withLock { tally in
                defer { tally.counts.removeAll(keepingCapacity: true) }
                return tally.counts
            }
            all.merge(counts, uniquingKeysWith: +)
        }
        return all
    }

    /// Puts counts back (a flush that failed), to go with the next one.
    private func restore(_ counts: [Entry: Int]) {
        shards[0].tally.withLock { tally in tally.counts.merge(counts, uniquingKeysWith: +) }
    }

    /// Adds the counts so far to Redis in one pipeline.
    public func flush() async {
        let counts = drain()
        guard !counts.isEmpty else { return }
        var commands: [RedisCommand] = []
        var days: Set<UsageDay> = []
        for (entry, count) in counts {
            let key = UsageReport.redisKey(keyID: entry.keyID, day: entry.day)
            commands.append(.hincrby(key, entry.outcome.rawValue, by: count))
            days.insert(UsageDay(key: key, day: entry.day))
        }
        for day in days {
            let end = calendar.start(of: day.day).map { $0.addingTimeInterval(Double(retentionDays + 1) * 86_400) } ?? Date()
            commands.append(.expireAt(day.key, unixSeconds: Int(end.timeIntervalSince1970)))
        }
        do {
            _ = try await redis.pipeline(commands)
        } catch {
            restore(counts)
            logger.warning("usage flush failed, keeping the counts for the next one", metadata: ["error": .string("\(error)")])
        }
    }

    /// Flushes once a second until cancelled, then once more.
    public func run() async {
        while !Task.isCancelled {
            try? await Task.sleep(for: .seconds(1))
            await flush()
        }
        await flush()
    }

    private struct UsageDay: Hashable {
        let key: String
        let day: String
    }
}
