import Foundation
import RedisClient

/// Reads the daily usage ``UsageCounter`` wrote: one key's days, or a partner's summed over its
/// keys (every key it ever had, revoked ones too).
public struct UsageReport: Sendable {
    /// One day's counts by ``UsageOutcome``.
    public struct Day: Sendable, Hashable {
        public let date: String
        public var counts: [UsageOutcome: Int]

        public subscript(_ outcome: UsageOutcome) -> Int { counts[outcome] ?? 0 }
    }

    let redis: RedisConnectionPool

    public init(redis: RedisConnectionPool) {
        self.redis = redis
    }

    /// Hash of one key's day: a field per ``UsageOutcome``.
    public static func redisKey(keyID: String, day: String) -> String { "pg:usage:{\(keyID)}:\(day)" }

    /// The days `days` of the keys `keyIDs`, summed, in order (a day nothing was counted on
    /// shows zeros).
    public func days(_ days: [String], keyIDs: [String]) async throws -> [Day] {
        var result = days.map { Day(date: $0, counts: [:]) }
        guard !keyIDs.isEmpty, !days.isEmpty else { return result }
        var commands: [RedisCommand] = []
        var slots: [Int] = []
        for keyID in keyIDs {
            for (index, day) in days.enumerated() {
                commands.append(.hgetall(Self.redisKey(keyID: keyID, day: day)))
                slots.append(index)
            }
        }
        // In chunks, so a partner with many keys over a long range is not one huge reply.
        var offset = 0
        while offset < commands.count {
            let end = min(offset + 1000, commands.count)
            let replies = try await redis.pipeline(Array(commands[offset..<end]))
            for (position, reply) in replies.enumerated() {
                for (field, value) in KeyRegistry.hashFields(reply) {
                    guard let outcome = UsageOutcome(rawValue: field), let count = Int(value) else { continue }
                    result[slots[offset + position]].counts[outcome, default: 0] += count
                }
            }
            offset = end
        }
        return result
    }
}
