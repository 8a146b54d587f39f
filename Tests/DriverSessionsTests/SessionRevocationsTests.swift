import DriverSessions
import DriverTokens
import Foundation
import RedisClient
import Testing
import TestSupport

@Suite("SessionRevocations: the in-process revocation cache", .realProcesses)
struct SessionRevocationsTests {
    static let userID = "usr_0123456789abcdef01234567"
    static let otherUser = "usr_fedcba9876543210fedcba98"

    /// The cache's Redis is never touched by `apply`; a pool to a closed port is enough.
    private func offline() throws -> (SessionRevocations, RedisConnectionPool) {
        let pool = RedisConnectionPool(configuration: RedisConfiguration(url: try RedisURL("redis://127.0.0.1:1/0"), poolSize: 1, timeout: .seconds(2)))
        return (SessionRevocations(redis: pool, accessTTL: .seconds(86_400), logger: .init(label: "test")), pool)
    }

    @Test func sessionMessagesRevokeThatSessionOnly() throws {
        let (cache, pool) = try offline()
        defer { pool.shutdown() }
        let now = Date()
        #expect(!cache.isRevoked(userID: Self.userID, sessionID: "aaaaaaaaaaaaaaaa", issuedAt: now))
        cache.apply("session aaaaaaaaaaaaaaaa 123")
        #expect(cache.isRevoked(userID: Self.userID, sessionID: "aaaaaaaaaaaaaaaa", issuedAt: now))
        #expect(cache.isRevoked(userID: Self.otherUser, sessionID: "aaaaaaaaaaaaaaaa", issuedAt: now.addingTimeInterval(3600)))
        #expect(!cache.isRevoked(userID: Self.userID, sessionID: "bbbbbbbbbbbbbbbb", issuedAt: now))
        // A session revocation says nothing about the user's next token.
        #expect(cache.earliestIssueTime(for: Self.userID, now: now) == now)
    }

    @Test func userMessagesRevokeTokensIssuedUpToThatSecond() throws {
        let (cache, pool) = try offline()
        defer { pool.shutdown() }
        let second: TimeInterval = 1_767_225_600
        cache.apply("user \(Self.userID) 1767225600500")
        for iat in [second - 3600, second - 1, second, second + 0.499, second + 0.5, second + 0.999] {
            #expect(cache.isRevoked(userID: Self.userID, sessionID: "aaaaaaaaaaaaaaaa", issuedAt: Date(timeIntervalSince1970: iat)), "iat \(iat)")
        }
        for iat in [second + 1, second + 1.5, second + 3600] {
            #expect(!cache.isRevoked(userID: Self.userID, sessionID: "aaaaaaaaaaaaaaaa", issuedAt: Date(timeIntervalSince1970: iat)), "iat \(iat)")
        }
        // Another user is not affected.
        #expect(!cache.isRevoked(userID: Self.otherUser, sessionID: "aaaaaaaaaaaaaaaa", issuedAt: Date(timeIntervalSince1970: second)))

        // The next token must wait for the following second, unless now is already past it.
        #expect(cache.earliestIssueTime(for: Self.userID, now: Date(timeIntervalSince1970: second + 0.7)) == Date(timeIntervalSince1970: second + 1))
        #expect(cache.earliestIssueTime(for: Self.userID, now: Date(timeIntervalSince1970: second - 10)) == Date(timeIntervalSince1970: second + 1))
        let later = Date(timeIntervalSince1970: second + 2.25)
        #expect(cache.earliestIssueTime(for: Self.userID, now: later) == later)
        let unrelated = Date(timeIntervalSince1970: second + 0.1)
        #expect(cache.earliestIssueTime(for: Self.otherUser, now: unrelated) == unrelated)
        // A marker given by the caller (from `open`) counts the same way.
        #expect(cache.earliestIssueTime(
            for: Self.otherUser, after: Date(timeIntervalSince1970: second + 5.25), now: unrelated) == Date(timeIntervalSince1970: second + 6))

        // A later revocation moves the marker; an earlier one does not move it back.
        cache.apply("user \(Self.userID) 1767225602000")
        #expect(cache.isRevoked(userID: Self.userID, sessionID: "x", issuedAt: Date(timeIntervalSince1970: second + 2)))
        #expect(!cache.isRevoked(userID: Self.userID, sessionID: "x", issuedAt: Date(timeIntervalSince1970: second + 3)))
        #expect(cache.earliestIssueTime(for: Self.userID, now: unrelated) == Date(timeIntervalSince1970: second + 3))
        cache.apply("user \(Self.userID) 1767225500000")
        #expect(cache.isRevoked(userID: Self.userID, sessionID: "x", issuedAt: Date(timeIntervalSince1970: second + 2)))
    }

    @Test func aMarkerOnASecondBoundaryCoversThatSecond() throws {
        let (cache, pool) = try offline()
        defer { pool.shutdown() }
        cache.apply("user \(Self.userID) 1767225600000")
        #expect(cache.isRevoked(userID: Self.userID, sessionID: "s", issuedAt: Date(timeIntervalSince1970: 1_767_225_600)))
        #expect(!cache.isRevoked(userID: Self.userID, sessionID: "s", issuedAt: Date(timeIntervalSince1970: 1_767_225_601)))
        #expect(cache.earliestIssueTime(for: Self.userID, now: Date(timeIntervalSince1970: 1_767_225_600)) == Date(timeIntervalSince1970: 1_767_225_601))
    }

    @Test(arguments: [
        "key abc",
        "key abc 123",
        "partner p",
        "partner p 123",
        "session",
        "session aaaaaaaaaaaaaaaa",
        "session aaaaaaaaaaaaaaaa notanumber",
        "session aaaaaaaaaaaaaaaa 123 extra",
        "user usr_0123456789abcdef01234567",
        "user usr_0123456789abcdef01234567 soon",
        "",
    ])
    func otherMessagesAreIgnored(message: String) throws {
        let (cache, pool) = try offline()
        defer { pool.shutdown() }
        cache.apply(message)
        let now = Date()
        for sessionID in ["abc", "p", "aaaaaaaaaaaaaaaa", "123"] {
            #expect(!cache.isRevoked(userID: Self.userID, sessionID: sessionID, issuedAt: now))
            #expect(!cache.isRevoked(userID: "abc", sessionID: sessionID, issuedAt: Date(timeIntervalSince1970: 0)))
            #expect(!cache.isRevoked(userID: "p", sessionID: sessionID, issuedAt: Date(timeIntervalSince1970: 0)))
        }
        #expect(cache.earliestIssueTime(for: Self.userID, now: now) == now)
    }

    @Test func noteHelpersApplyImmediately() throws {
        let (cache, pool) = try offline()
        defer { pool.shutdown() }
        cache.noteSessionRevoked("cccccccccccccccc")
        #expect(cache.isRevoked(userID: Self.userID, sessionID: "cccccccccccccccc", issuedAt: Date()))
        let at = Date(timeIntervalSince1970: 1_767_225_600.25)
        cache.noteUserRevoked(Self.userID, at: at)
        #expect(cache.isRevoked(userID: Self.userID, sessionID: "d", issuedAt: at))
        #expect(!cache.isRevoked(userID: Self.userID, sessionID: "d", issuedAt: Date(timeIntervalSince1970: 1_767_225_601)))
    }

    @Test func reloadPicksUpRevocationsMadeInRedis() async throws {
        let fixture = try await Fixture()
        let store = fixture.sessionStore(reuseInterval: .zero)
        let driver = try phone("9876543210")
        let loggedOut = try await store.open(phone: driver, channel: .otp)
        let kept = try await store.open(phone: driver, channel: .otp)
        let admin = try await store.open(phone: try phone("7012345678"), channel: .otp)
        let reused = try await store.open(phone: try phone("8012345678"), channel: .otp)

        try await store.logout(userID: loggedOut.userID, sessionID: loggedOut.refreshToken.familyID, refreshToken: nil)
        let revokedAt = try #require(try await store.revokeAllSessions(ofUser: admin.userID))
        _ = try #require(rotated(try await store.rotate(reused.refreshToken)))
        guard case .reused = try await store.rotate(reused.refreshToken) else {
            Issue.record("replayed token must be reused")
            return
        }

        // Another instance that missed the messages.
        let cache = fixture.revocations()
        let now = Date()
        #expect(!cache.isRevoked(userID: loggedOut.userID, sessionID: loggedOut.refreshToken.familyID, issuedAt: now))
        #expect(cache.completedReloads == 0)
        try await cache.reload()
        #expect(cache.completedReloads == 1)

        #expect(cache.isRevoked(userID: loggedOut.userID, sessionID: loggedOut.refreshToken.familyID, issuedAt: now))
        #expect(!cache.isRevoked(userID: kept.userID, sessionID: kept.refreshToken.familyID, issuedAt: now))
        #expect(cache.isRevoked(userID: reused.userID, sessionID: reused.refreshToken.familyID, issuedAt: now))

        // The admin's user: every token up to the revocation's second, none after.
        #expect(cache.isRevoked(userID: admin.userID, sessionID: admin.refreshToken.familyID, issuedAt: revokedAt))
        #expect(cache.isRevoked(userID: admin.userID, sessionID: "eeeeeeeeeeeeeeee", issuedAt: revokedAt.addingTimeInterval(-60)))
        let nextSecond = Date(timeIntervalSince1970: (revokedAt.timeIntervalSince1970 + 1).rounded(.down))
        #expect(!cache.isRevoked(userID: admin.userID, sessionID: "eeeeeeeeeeeeeeee", issuedAt: nextSecond))
        #expect(cache.earliestIssueTime(for: admin.userID, now: revokedAt) == nextSecond)
        #expect(!cache.isRevoked(userID: kept.userID, sessionID: "eeeeeeeeeeeeeeee", issuedAt: revokedAt))

        // Reloading again is idempotent.
        try await cache.reload()
        #expect(cache.completedReloads == 2)
        #expect(cache.isRevoked(userID: loggedOut.userID, sessionID: loggedOut.refreshToken.familyID, issuedAt: now))
        await fixture.close()
    }

    @Test func reloadDropsRevocationsOlderThanTheAccessLifetime() async throws {
        let fixture = try await Fixture()
        // Entries well past access TTL + 60 s cover no live token.
        let old = Int64(Date().addingTimeInterval(-3_600).timeIntervalSince1970 * 1000)
        let recent = Int64(Date().timeIntervalSince1970 * 1000)
        try await fixture.server.cli("ZADD", "pg:revoked-sessions", String(old), "oldoldoldoldoldo", String(recent), "newnewnewnewnewn")
        try await fixture.server.cli("ZADD", "pg:revoked-users", String(old), Self.otherUser)
        let cache = fixture.revocations(accessTTL: .seconds(60))
        try await cache.reload()
        let now = Date()
        #expect(cache.isRevoked(userID: Self.userID, sessionID: "newnewnewnewnewn", issuedAt: now))
        #expect(!cache.isRevoked(userID: Self.userID, sessionID: "oldoldoldoldoldo", issuedAt: now))
        #expect(!cache.isRevoked(userID: Self.otherUser, sessionID: "s", issuedAt: Date(timeIntervalSince1970: 0)))
        await fixture.close()
    }
}
