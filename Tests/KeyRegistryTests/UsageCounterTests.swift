import Foundation
import Logging
import RedisClient
import Testing
import TestSupport
@testable import KeyRegistry

/// Usage counted in memory, flushed to Redis in one pipeline, read back by day.
@Suite("Usage counter and report", .realProcesses)
struct UsageCounterTests {
    @Test func countsAreFlushedByDayInTheZoneAndSummedOverKeys() async throws {
        let server = try await RedisServer()
        let pool = RedisConnectionPool(configuration: RedisConfiguration(url: try RedisURL(server.url), poolSize: 2, timeout: .seconds(5)))
        defer { pool.shutdown() }
        let kolkata = QuotaCalendar(timeZone: TimeZone(identifier: "Asia/Kolkata")!)
        let counter = UsageCounter(redis: pool, calendar: kolkata, retentionDays: 90, logger: Logger(label: "test"))
        // The last second of today in Kolkata, and the first of tomorrow.
        let today = kolkata.window(.day, containing: Date())
        let late = today.end.addingTimeInterval(-1)
        let next = today.end
        let tomorrow = kolkata.window(.day, containing: next).label
        let after = kolkata.window(.day, containing: next.addingTimeInterval(86_400)).label
        for _ in 0..<3 { counter.record(keyID: "key_a", .allowed, also: .upstream2xx, now: late) }
        counter.record(keyID: "key_a", .refusedQuota, now: next)
        counter.record(keyID: "key_b", .allowed, also: .upstream5xx, now: next)
        await counter.flush()
        #expect(counter.drain().isEmpty, "a flush takes every count")

        let report = UsageReport(redis: pool)
        let days = try await report.days([today.label, tomorrow, after], keyIDs: ["key_a"])
        #expect(days.map(\.date) == [today.label, tomorrow, after])
        #expect(days[0][.allowed] == 3 && days[0][.upstream2xx] == 3 && days[0][.refusedQuota] == 0)
        #expect(days[1][.refusedQuota] == 1 && days[1][.allowed] == 0)
        #expect(days[2].counts.isEmpty)
        let both = try await report.days([tomorrow], keyIDs: ["key_a", "key_b"])
        #expect(both[0][.allowed] == 1 && both[0][.refusedQuota] == 1 && both[0][.upstream5xx] == 1)

        // Each day expires retention_days after it ends.
        let ttl = Int(try await server.cli("TTL", UsageReport.redisKey(keyID: "key_a", day: today.label))) ?? 0
        let expected = Int(today.start.addingTimeInterval(91 * 86_400).timeIntervalSinceNow)
        #expect(abs(ttl - expected) < 60, "TTL \(ttl), expected about \(expected)")
    }
}
