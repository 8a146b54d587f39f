@testable import DriverSessions
import DriverTokens
import Foundation
import GatewayPrimitives
import RedisClient
import Testing
import TestSupport

/// Redis Cluster refuses a script whose keys span two hash slots, and routes a script by the
/// keys it declares. Every session flow runs here against a one-node cluster (which refuses
/// cross-slot KEYS with `CROSSSLOT`), and no script may build a key name itself.
@Suite("Session scripts on Redis Cluster", .realProcesses)
struct ClusterSlotTests {
    static let scripts = [
        SessionScripts.storeOTP, SessionScripts.checkOTP, SessionScripts.openSession,
        SessionScripts.rotateRefreshToken, SessionScripts.announceSessions,
        SessionScripts.revokeFamily, SessionScripts.buryIfMissing, SessionScripts.markUserRevoked,
        SessionScripts.announceUser, SessionScripts.releasePhone, SessionScripts.eraseFamily, SessionScripts.eraseUser,
    ]

    @Test func noScriptBuildsAKeyName() {
        for script in Self.scripts {
            let withoutChannel = script.source.replacingOccurrences(of: "'\(SessionKeys.invalidationChannel)'", with: "")
            #expect(!withoutChannel.contains("pg:"), "\(script.name) names a key itself")
        }
    }

    @Test func everySessionFlowWorksWhenEachScriptStaysInOneSlot() async throws {
        let fixture = try await Fixture(poolSize: 4, cluster: true)
        let store = fixture.sessionStore()
        let otps = fixture.otpStore()
        let driver = try phone("9876543210")

        try await otps.issue("123456", for: driver)
        #expect(try await otps.check("123456", for: driver) == .accepted)
        let first = try await store.open(phone: driver, channel: .otp)
        #expect(first.isNewUser)
        let second = try await store.open(phone: driver, channel: .partnerSDK(partnerID: "ptr_x"), driverID: "NY-1", name: "Ravi")
        #expect(second.userID == first.userID)

        let next = try #require(rotated(try await store.rotate(first.refreshToken))).successor
        #expect(SessionStoreTests.retried(try await store.rotate(first.refreshToken))?.current == next)
        let live = try #require(try await store.sessions(ofUser: first.userID))
        #expect(Set(live.map(\.sessionID)) == [first.refreshToken.familyID, second.refreshToken.familyID])
        #expect(try await store.findUser(phone: driver)?.liveSessions == 2)

        // Reuse, logout, one session, every session: each ends in its own slots.
        let third = try await store.open(phone: driver, channel: .otp)
        _ = try #require(rotated(try await store.rotate(next)))
        guard case .reused = try await store.rotate(first.refreshToken) else {
            Issue.record("reuse on a cluster")
            return
        }
        #expect(try await store.logout(userID: first.userID, sessionID: second.refreshToken.familyID, refreshToken: nil) == 1)
        #expect(try await store.revokeSession(third.refreshToken.familyID, ofUser: first.userID))
        let fourth = try await store.open(phone: driver, channel: .otp)
        #expect(try await store.revokeAllSessions(ofUser: first.userID) != nil)
        #expect(isRefused(try await store.rotate(fourth.refreshToken)))
        #expect(try await store.sessions(ofUser: first.userID) == [])
        let revoked = try await fixture.server.cli("ZRANGE", SessionKeys.revokedSessions, "0", "-1")
        #expect(Set(revoked.split(separator: "\n").map(String.init)).isSuperset(of: [
            first.refreshToken.familyID, second.refreshToken.familyID, third.refreshToken.familyID, fourth.refreshToken.familyID,
        ]))
        // Every revocation completed: none is left pending.
        let scores = try await fixture.server.cli("ZRANGE", SessionKeys.revokedSessions, "0", "-1", "WITHSCORES")
            .split(separator: "\n").enumerated().filter { $0.offset % 2 == 1 }.map { String($0.element) }
        #expect(!scores.isEmpty && !scores.contains(SessionKeys.pendingRevocationScore), "\(scores)")

        // Erasure reaches every session, revoked ones too, and every token record, spent
        // ones included, each family in its own slot.
        #expect(try await store.erase(userID: first.userID) != nil)
        let left = try await fixture.everything()
        #expect(!left.contains(first.userID) && !left.contains("pg:rt:"), "\(left)")
        await fixture.close()
    }

    /// A new user's keys land in its phone's slot and each family in its user's, so one
    /// script opens the session. A user made by an older gateway (an id of any slot) still
    /// logs in, its family in its own slot; an index naming an erased user is released and
    /// the phone starts over.
    @Test func aSessionsKeysShareItsUsersSlot() async throws {
        let fixture = try await Fixture(cluster: true)
        let store = fixture.sessionStore()
        let driver = try phone("9876543210")
        let opened = try await store.open(phone: driver, channel: .otp)
        let phoneSlot = RedisHashSlot.of(SessionKeys.phone(fixture.hasher.tag(for: driver)))
        #expect(RedisHashSlot.of(SessionKeys.user(opened.userID)) == phoneSlot)
        #expect(RedisHashSlot.of(SessionKeys.family(opened.refreshToken.familyID)) == phoneSlot)

        let other = try phone("9876543211")
        let index = SessionKeys.phone(fixture.hasher.tag(for: other))
        var legacy = "usr_" + RandomHex.string(byteCount: 12)
        while RedisHashSlot.of(SessionKeys.user(legacy)) == RedisHashSlot.of(index) { legacy = "usr_" + RandomHex.string(byteCount: 12) }
        try await fixture.server.cli("HSET", SessionKeys.user(legacy), "phone", "******3211", "created_at", "1")
        try await fixture.server.cli("SET", index, legacy)
        let joined = try await store.open(phone: other, channel: .otp)
        #expect(joined.userID == legacy && !joined.isNewUser)
        #expect(RedisHashSlot.of(SessionKeys.family(joined.refreshToken.familyID)) == RedisHashSlot.of(SessionKeys.user(legacy)))
        #expect(rotated(try await store.rotate(joined.refreshToken))?.userID == legacy)

        try await fixture.server.cli("DEL", SessionKeys.user(legacy))
        let restarted = try await store.open(phone: other, channel: .otp)
        #expect(restarted.isNewUser && restarted.userID != legacy)
        #expect(try await fixture.server.cli("GET", index) == restarted.userID)
        #expect(RedisHashSlot.of(SessionKeys.user(restarted.userID)) == RedisHashSlot.of(index))
        await fixture.close()
    }

    /// A revocation cut short after its first step (listed as pending, family untouched) is
    /// completed by running it again: the family dies and the entry gets its real time.
    @Test func aRevocationCutShortIsCompletedByRunningItAgain() async throws {
        let fixture = try await Fixture(cluster: true)
        let store = fixture.sessionStore()
        let opened = try await store.open(phone: try phone("9876543210"), channel: .otp)
        let family = opened.refreshToken.familyID
        try await fixture.server.cli("ZADD", SessionKeys.revokedSessions, SessionKeys.pendingRevocationScore, family)
        try await store.completeRevocation(ofSession: family)
        #expect(try await fixture.server.cli("HGET", "pg:rtfam:{\(family)}", "state") == "revoked")
        let score = try await fixture.server.cli("ZSCORE", SessionKeys.revokedSessions, family)
        #expect(score != SessionKeys.pendingRevocationScore && Int64(score) != nil, "\(score)")
        #expect(isRefused(try await store.rotate(opened.refreshToken)))
        await fixture.close()
    }
}
