import Foundation
import Testing
@testable import KeyRegistry

/// Quota periods and usage days: calendar arithmetic in a configured zone, with no clock.
@Suite("Quota calendar")
struct QuotaCalendarTests {
    static let kolkata = QuotaCalendar(timeZone: TimeZone(identifier: "Asia/Kolkata")!)

    /// `text` as an instant: `2026-11-26T18:29:59Z`.
    static func instant(_ text: String) throws -> Date {
        try #require(try? Date(text, strategy: .iso8601))
    }

    @Test func aKolkataDayStartsAtItsMidnightNotUTCs() throws {
        // 23:59:59 in Kolkata is 18:29:59 UTC; a second later the next day starts.
        let last = Self.kolkata.window(.day, containing: try Self.instant("2026-11-26T18:29:59Z"))
        #expect(last.label == "2026-11-26")
        #expect(last.start == (try Self.instant("2026-11-25T18:30:00Z")))
        #expect(last.end == (try Self.instant("2026-11-26T18:30:00Z")))
        let next = Self.kolkata.window(.day, containing: try Self.instant("2026-11-26T18:30:00Z"))
        #expect(next.label == "2026-11-27")
        #expect(QuotaCalendar.utc.window(.day, containing: try Self.instant("2026-11-26T18:30:00Z")).label == "2026-11-26")
    }

    @Test func monthsEndWhereTheCalendarSays() throws {
        let january = QuotaCalendar.utc.window(.month, containing: try Self.instant("2026-01-31T23:59:59Z"))
        #expect(january.label == "2026-01")
        #expect(january.end == (try Self.instant("2026-02-01T00:00:00Z")))
        // A leap February has 29 days, a common one 28.
        #expect(QuotaCalendar.utc.window(.month, containing: try Self.instant("2028-02-29T12:00:00Z")).end == (try Self.instant("2028-03-01T00:00:00Z")))
        #expect(QuotaCalendar.utc.window(.month, containing: try Self.instant("2026-02-28T12:00:00Z")).end == (try Self.instant("2026-03-01T00:00:00Z")))
        // December rolls into the next year.
        let december = Self.kolkata.window(.month, containing: try Self.instant("2026-12-31T18:29:59Z"))
        #expect(december.label == "2026-12")
        #expect(december.end == (try Self.instant("2026-12-31T18:30:00Z")))
        #expect(Self.kolkata.window(.month, containing: try Self.instant("2026-12-31T18:30:00Z")).label == "2027-01")
    }

    @Test func aDayAcrossADaylightSavingChangeIsNot24Hours() throws {
        let newYork = QuotaCalendar(timeZone: TimeZone(identifier: "America/New_York")!)
        let day = newYork.window(.day, containing: try Self.instant("2026-03-08T12:00:00Z"))
        #expect(day.label == "2026-03-08")
        #expect(day.end.timeIntervalSince(day.start) == 23 * 3600)
    }

    @Test func usageRangesListEveryDayAndRefuseNonDates() {
        #expect(QuotaCalendar.utc.days(from: "2028-02-27", to: "2028-03-01") == ["2028-02-27", "2028-02-28", "2028-02-29", "2028-03-01"])
        #expect(Self.kolkata.days(from: "2026-11-26", to: "2026-11-26") == ["2026-11-26"])
        #expect(QuotaCalendar.utc.days(from: "2026-03-02", to: "2026-03-01") == nil)
        for text in ["2026-02-30", "2026-13-01", "2026-1-01", "26-01-01", "2026-01-01T00:00", "", "yesterday"] {
            #expect(QuotaCalendar.utc.start(of: text) == nil, "\(text)")
        }
    }

    /// An admin's range is measured before its days are listed: nine millennia are refused at
    /// once, not after naming three million days on an event loop.
    @Test func aRangeLongerThanAYearIsRefusedWithoutListingItsDays() {
        let clock = ContinuousClock()
        let started = clock.now
        #expect(QuotaCalendar.utc.days(from: "0001-01-01", to: "9999-12-31")?.count == nil)
        #expect(clock.now - started < .seconds(1))
        #expect(QuotaCalendar.utc.days(from: "2028-01-01", to: "2028-12-31")?.count == 366, "a leap year is the longest")
        #expect(QuotaCalendar.utc.days(from: "2027-01-01", to: "2028-01-02")?.count == nil, "367 days")
    }

    @Test func aKeysAllowlistNarrowsItsPartners() throws {
        var partner = Partner(id: "ptr_1", name: "N", status: .active, scopes: [], rate: 1, burst: 1, createdAt: Date())
        var key = KeyRecord(
            id: "key_1", partnerID: "ptr_1", scopes: [], storedStatus: .active, createdAt: Date(), expiresAt: nil, lastUsedAt: nil,
            displayPrefix: "pgk_live_AbCd…", name: nil, hash: "h"
        )
        #expect(NetworkAllowlist.admits(clientIP: "198.51.100.7", key: key, partner: partner), "no lists: any address")
        #expect(NetworkAllowlist.admits(clientIP: nil, key: key, partner: partner))
        partner.allowedNetworks = NetworkAllowlist(stored: "203.0.113.0/24 2001:db8::/32")
        #expect(NetworkAllowlist.admits(clientIP: "203.0.113.9", key: key, partner: partner))
        #expect(NetworkAllowlist.admits(clientIP: "2001:db8::5", key: key, partner: partner))
        #expect(NetworkAllowlist.admits(clientIP: "::ffff:203.0.113.9", key: key, partner: partner), "an IPv4-mapped address is its IPv4 address")
        #expect(!NetworkAllowlist.admits(clientIP: "198.51.100.7", key: key, partner: partner))
        #expect(!NetworkAllowlist.admits(clientIP: nil, key: key, partner: partner), "no address known: refused by any list")
        key.allowedNetworks = NetworkAllowlist(stored: "203.0.113.8/29")
        #expect(NetworkAllowlist.admits(clientIP: "203.0.113.9", key: key, partner: partner))
        #expect(!NetworkAllowlist.admits(clientIP: "203.0.113.20", key: key, partner: partner), "in the partner's list, not the key's")
        #expect(!NetworkAllowlist.admits(clientIP: "2001:db8::5", key: key, partner: partner))
    }

    @Test func quotasAndAllowlistsSurviveStorage() throws {
        #expect(Quota(stored: Quota(limit: 100_000, period: .month).stored) == Quota(limit: 100_000, period: .month))
        #expect(Quota(stored: "") == nil)
        #expect(Quota(stored: "ten/day") == nil)
        let list = NetworkAllowlist(stored: "203.0.113.0/24 2001:db8::/32")
        #expect(list.texts == ["203.0.113.0/24", "2001:db8::/32"])
        #expect(list.allows([203, 0, 113, 9]))
        #expect(!list.allows([198, 51, 100, 1]))
        #expect(NetworkAllowlist(stored: "").allows([198, 51, 100, 1]))
        // A stored list that no longer parses fails closed.
        #expect(!NetworkAllowlist(stored: "garbage").allows([198, 51, 100, 1]))
    }
}
