import DriverSessions
import DriverTokens
import Foundation
import Testing
import TestSupport

/// The parts of a `.rotated` answer, or nil for any other response.
func rotated(_ rotation: RefreshRotation) -> (userID: String, channel: AccessTokenChannel, successor: RefreshToken)? {
    if case .rotated(let userID, let channel, let successor) = rotation { return (userID, channel, successor) }
    return nil
}

func isRefused(_ rotation: RefreshRotation) -> Bool {
    if case .refused = rotation { return true }
    return false
}

@Suite("SessionStore against a real redis-server", .realProcesses)
struct SessionStoreTests {
    @Test func theSamePhoneIsTheSameUserInEveryChannel() async throws {
        let fixture = try await Fixture()
        let store = fixture.sessionStore()
        let first = try await store.open(phone: try phone("9876543210"), channel: .otp)
        #expect(first.isNewUser)
        #expect(first.userID.hasPrefix("usr_"))
        #expect(SessionStore.isValidUserID(first.userID))
        let hex = first.userID.dropFirst(4)
        #expect(hex.count == 24 && hex.allSatisfy { "0123456789abcdef".contains($0) })
        #expect(first.revokedBefore == nil)

        let sdk = try await store.open(
            phone: try phone("9876543210"), channel: .partnerSDK(partnerID: "ptr_x"), driverID: "NY-123", name: "Ravi")
        #expect(sdk.userID == first.userID)
        // New to this partner, whoever registered the phone before.
        #expect(sdk.isNewUser)
        #expect(sdk.refreshToken.familyID != first.refreshToken.familyID)

        let prefixed = try await store.open(phone: try phone("+919876543210"), channel: .otp)
        #expect(prefixed.userID == first.userID)
        #expect(!prefixed.isNewUser)
        let prefixedNoPlus = try await store.open(phone: try phone("919876543210"), channel: .otp)
        #expect(prefixedNoPlus.userID == first.userID)

        let other = try await store.open(phone: try phone("9876543211"), channel: .partnerSDK(partnerID: "ptr_x"), driverID: "NY-124")
        #expect(other.isNewUser)
        #expect(other.userID != first.userID)
        #expect(SessionStore.isValidUserID(other.userID))

        // The user record: masked phone, the partner's driver id, the name.
        let user = "pg:user:{\(first.userID)}"
        #expect(try await fixture.server.cli("HGET", user, "phone") == "******3210")
        #expect(try await fixture.server.cli("HGET", user, "driver_id:ptr_x") == "NY-123")
        #expect(try await fixture.server.cli("HGET", user, "name:ptr_x") == "Ravi")
        #expect(try await fixture.server.cli("HEXISTS", user, "name") == "0")
        #expect(try await fixture.server.cli("SCARD", user + ":sessions") == "4")
        let tag = fixture.hasher.tag(for: try phone("9876543210"))
        #expect(try await fixture.server.cli("GET", "pg:phone:{\(tag)}") == first.userID)

        // Nothing in Redis holds a full phone number, nor any refresh token.
        let dump = try await fixture.everything()
        #expect(dump.contains(user))
        #expect(!dump.contains("9876543210"))
        #expect(!dump.contains("9876543211"))
        for token in [first, sdk, prefixed, prefixedNoPlus, other].map(\.refreshToken) {
            #expect(!dump.contains(token.value))
            #expect(!dump.contains(String(token.value.dropFirst(RefreshToken.familyIDLength))))
        }
        await fixture.close()
    }

    @Test func userIDsAreValidatedByShape() {
        #expect(SessionStore.isValidUserID(SessionStore.newUserID(inSlot: 7)))
        #expect(SessionStore.newUserID(inSlot: 7) != SessionStore.newUserID(inSlot: 7))
        #expect(!SessionStore.isValidUserID("usr_"))
        #expect(!SessionStore.isValidUserID("usr_0123456789abcdef0123456"))
        #expect(!SessionStore.isValidUserID("usr_0123456789abcdef012345678"))
        #expect(!SessionStore.isValidUserID("usr_0123456789ABCDEF01234567"))
        #expect(!SessionStore.isValidUserID("usx_0123456789abcdef01234567"))
        #expect(SessionStore.isValidUserID("usr_0123456789abcdef01234567"))
    }

    @Test func rotationSpendsTheTokenAndReuseRevokesTheFamily() async throws {
        let fixture = try await Fixture()
        let store = fixture.sessionStore()
        let opened = try await store.open(
            phone: try phone("9876543210"), channel: .partnerSDK(partnerID: "ptr_x"), driverID: "NY-123")
        let original = opened.refreshToken

        let first = try #require(rotated(try await store.rotate(original)))
        #expect(first.userID == opened.userID)
        #expect(first.channel == .partnerSDK(partnerID: "ptr_x"))
        #expect(first.successor.familyID == original.familyID)
        #expect(first.successor.value != original.value)

        let second = try #require(rotated(try await store.rotate(first.successor)))
        #expect(second.userID == opened.userID)
        #expect(second.channel == .partnerSDK(partnerID: "ptr_x"))
        #expect(second.successor.familyID == original.familyID)
        #expect(try await fixture.server.cli("ZSCORE", "pg:revoked-sessions", original.familyID) == "")

        // The spent original comes back: it was copied, so the whole login dies.
        guard case .reused(let userID, let sessionID) = try await store.rotate(original) else {
            Issue.record("a spent token must be reported as reused")
            return
        }
        #expect(userID == opened.userID)
        #expect(sessionID == original.familyID)
        #expect(isRefused(try await store.rotate(second.successor)))
        #expect(isRefused(try await store.rotate(first.successor)))
        #expect(isRefused(try await store.rotate(original)))
        #expect(try await fixture.server.cli("HGET", "pg:rtfam:{\(original.familyID)}", "state") == "revoked")
        let score = try await fixture.server.cli("ZSCORE", "pg:revoked-sessions", original.familyID)
        #expect(Int64(score) != nil, "revoked family listed, score \(score)")
        await fixture.close()
    }

    @Test func otpChannelSurvivesRotation() async throws {
        let fixture = try await Fixture()
        let store = fixture.sessionStore()
        let opened = try await store.open(phone: try phone("8123456789"), channel: .otp)
        let next = try #require(rotated(try await store.rotate(opened.refreshToken)))
        #expect(next.channel == .otp)
        #expect(next.userID == opened.userID)
        await fixture.close()
    }

    /// Parallel first logins of one phone race for its index: every login ends in the one user
    /// the index names, with a session of its own that works, and no loser leaves a user or a
    /// family behind (the claim and the session open in one script).
    @Test(arguments: [false, true])
    func parallelFirstLoginsOfOnePhoneAreOneUser(cluster: Bool) async throws {
        let fixture = try await Fixture(poolSize: 8, cluster: cluster)
        let store = fixture.sessionStore()
        let number = try phone("9876543210")
        let opened = try await withThrowingTaskGroup(of: OpenedSession.self) { group in
            for _ in 0..<20 { group.addTask { try await store.open(phone: number, channel: .otp) } }
            return try await group.reduce(into: [OpenedSession]()) { $0.append($1) }
        }
        let userIDs = Set(opened.map(\.userID))
        #expect(userIDs.count == 1)
        #expect(opened.filter(\.isNewUser).count == 1)
        let userID = try #require(userIDs.first)
        #expect(try await fixture.server.cli("GET", "pg:phone:{\(fixture.hasher.tag(for: number))}") == userID)
        #expect(try await fixture.server.cli("SCARD", "pg:user:{\(userID)}:sessions") == "20")
        let users = try await fixture.server.cli("KEYS", "pg:user:*").split(separator: "\n").filter { !$0.hasSuffix(":sessions") }
        #expect(users == ["pg:user:{\(userID)}"])
        let families = try await fixture.server.cli("KEYS", "pg:rtfam:*").split(separator: "\n")
        #expect(families.count == 20)
        for session in opened {
            #expect(rotated(try await store.rotate(session.refreshToken))?.userID == userID)
        }
        await fixture.close()
    }

    /// Within the reuse interval, concurrent rotations of one token all end with the one
    /// successor: one spends the token, the others are answered with what it produced.
    @Test func twentyParallelRotationsOfOneTokenShareOneSuccessor() async throws {
        let fixture = try await Fixture(poolSize: 8)
        let store = fixture.sessionStore()
        let opened = try await store.open(phone: try phone("9876543210"), channel: .otp)
        let token = opened.refreshToken
        let results = try await Self.rotateConcurrently(token, times: 20, store: store)
        #expect(results.compactMap(rotated).count == 1)
        let retried = results.compactMap(Self.retried)
        #expect(retried.count == 19)
        let successors = Set(results.compactMap { rotated($0)?.successor ?? Self.retried($0)?.current })
        #expect(successors.count == 1)
        #expect(retried.allSatisfy { $0.userID == opened.userID && $0.channel == .otp })
        // The family has exactly one live token, and it rotates.
        let successor = try #require(successors.first)
        #expect(try await fixture.server.cli("HGET", "pg:rtfam:{\(token.familyID)}", "current") == successor.sha256Hex)
        #expect(rotated(try await store.rotate(successor)) != nil)
        await fixture.close()
    }

    /// With a zero interval the strict rule holds: exactly one rotation, every other
    /// presentation is reuse (or, once the family is revoked, refused).
    @Test func withoutAReuseIntervalOneParallelRotationWinsAndTheRestIsReuse() async throws {
        let fixture = try await Fixture(poolSize: 8)
        let store = fixture.sessionStore(reuseInterval: .zero)
        let opened = try await store.open(phone: try phone("9876543210"), channel: .otp)
        let token = opened.refreshToken
        let results = try await Self.rotateConcurrently(token, times: 20, store: store)
        #expect(results.compactMap(rotated).count == 1)
        #expect(results.compactMap(Self.retried).isEmpty)
        for result in results where rotated(result) == nil {
            switch result {
            case .refused: break
            case .reused(let userID, let sessionID):
                #expect(userID == opened.userID)
                #expect(sessionID == token.familyID)
            case .rotated, .retried: Issue.record("a second success: \(result)")
            }
        }
        #expect(try await fixture.server.cli("HGET", "pg:rtfam:{\(token.familyID)}", "state") == "revoked")
        await fixture.close()
    }

    /// Only the immediate predecessor, only within the interval, and only while its successor
    /// is unspent gets the successor again; every other spent token is reuse.
    @Test func theReuseIntervalCoversOnlyTheImmediatePredecessor() async throws {
        let fixture = try await Fixture()
        let store = fixture.sessionStore()
        let driver = try phone("9876543210")

        // A lost answer: the same token again gets the same successor, and changes nothing.
        let one = try await store.open(phone: driver, channel: .otp)
        let first = try #require(rotated(try await store.rotate(one.refreshToken))).successor
        let again = try #require(Self.retried(try await store.rotate(one.refreshToken)))
        #expect(again.current == first)
        #expect(again.userID == one.userID)
        // Once the successor is spent, its predecessor is reuse: the session is revoked.
        let second = try #require(rotated(try await store.rotate(first))).successor
        guard case .reused = try await store.rotate(one.refreshToken) else {
            Issue.record("the predecessor of a spent successor must be reuse")
            return
        }
        #expect(isRefused(try await store.rotate(second)))

        // A grandparent is reuse even within the interval.
        let two = try await store.open(phone: driver, channel: .otp)
        let twoFirst = try #require(rotated(try await store.rotate(two.refreshToken))).successor
        let twoSecond = try #require(rotated(try await store.rotate(twoFirst))).successor
        guard case .reused = try await store.rotate(two.refreshToken) else {
            Issue.record("a grandparent must be reuse")
            return
        }
        #expect(isRefused(try await store.rotate(twoSecond)))
        await fixture.close()
    }

    @Test func afterTheReuseIntervalTheSameRetryIsReuse() async throws {
        let fixture = try await Fixture()
        let store = fixture.sessionStore(reuseInterval: .milliseconds(300))
        let opened = try await store.open(phone: try phone("9876543210"), channel: .otp)
        let successor = try #require(rotated(try await store.rotate(opened.refreshToken))).successor
        #expect(Self.retried(try await store.rotate(opened.refreshToken)) != nil)
        // Wait on Redis's own clock (the script's time source) until the interval is over.
        let refreshedAt = try #require(Int64(try await fixture.server.cli("HGET", "pg:rtfam:{\(opened.refreshToken.familyID)}", "refreshed_at")))
        try await eventually(timeout: .seconds(5), interval: .milliseconds(20)) {
            try await fixture.redisNowMilliseconds() > refreshedAt + 300
        }
        guard case .reused = try await store.rotate(opened.refreshToken) else {
            Issue.record("a retry after the interval must be reuse")
            return
        }
        #expect(isRefused(try await store.rotate(successor)))
        await fixture.close()
    }

    /// The parts of a `.retried` answer, or nil for any other response.
    static func retried(_ rotation: RefreshRotation) -> (userID: String, channel: AccessTokenChannel, current: RefreshToken)? {
        if case .retried(let userID, let channel, let current) = rotation { return (userID, channel, current) }
        return nil
    }

    static func rotateConcurrently(_ token: RefreshToken, times: Int, store: SessionStore) async throws -> [RefreshRotation] {
        try await withThrowingTaskGroup(of: RefreshRotation.self) { group in
            for _ in 0..<times {
                group.addTask { try await store.rotate(token) }
            }
            return try await group.reduce(into: [RefreshRotation]()) { $0.append($1) }
        }
    }

    @Test func unknownTokensAreRefused() async throws {
        let fixture = try await Fixture()
        let store = fixture.sessionStore()
        #expect(isRefused(try await store.rotate(RefreshToken.newFamily())))
        // A made-up token in a real family is refused too, and revokes nothing.
        let opened = try await store.open(phone: try phone("9876543210"), channel: .otp)
        #expect(isRefused(try await store.rotate(opened.refreshToken.randomSibling())))
        #expect(rotated(try await store.rotate(opened.refreshToken)) != nil)
        await fixture.close()
    }

    @Test func aSpentTokenIsReuseAfterItsOwnRecordExpired() async throws {
        // A token's record expires a refresh TTL after it was issued; its session lives on with
        // each refresh. The record's expiry is its deletion, done here rather than waited for.
        let fixture = try await Fixture()
        let store = fixture.sessionStore()
        let opened = try await store.open(phone: try phone("9876543210"), channel: .otp)
        let original = opened.refreshToken
        let first = try #require(rotated(try await store.rotate(original)))
        _ = try #require(rotated(try await store.rotate(first.successor)))
        try await fixture.server.cli("DEL", "pg:rt:{\(original.familyID)}:\(original.sha256Hex)")
        // A token the session never issued is refused, not reuse: the session lives on.
        let made = try #require(RefreshToken.successor(inFamily: original.familyID))
        #expect(isRefused(try await store.rotate(made)))
        #expect(try await fixture.server.cli("HGET", "pg:rtfam:{\(original.familyID)}", "state") == "active")
        guard case .reused(let userID, _) = try await store.rotate(original) else {
            Issue.record("a spent token whose record expired must still be reuse")
            return
        }
        #expect(userID == opened.userID)
        #expect(try await fixture.server.cli("HGET", "pg:rtfam:{\(original.familyID)}", "state") == "revoked")
        await fixture.close()
    }

    @Test func anErasureThatFailsBeforeTheRecordGoesCanBeDoneAgain() async throws {
        // The caller's own keys go before the user record: a failure there leaves a user to
        // erase again, never one gone with the caller's keys left behind.
        struct Down: Error {}
        let fixture = try await Fixture()
        let store = fixture.sessionStore()
        let server = fixture.server
        let opened = try await store.open(phone: try phone("9876543210"), channel: .otp)
        let userKey = "pg:user:{\(opened.userID)}"
        await #expect(throws: Down.self) { try await store.erase(userID: opened.userID) { _ in throw Down() } }
        #expect(try await server.cli("EXISTS", userKey) == "1")
        let erased = try await store.erase(userID: opened.userID) { phoneTag in
            #expect(phoneTag != nil)
            let exists = try await server.cli("EXISTS", userKey)
            #expect(exists == "1", "the record goes after the caller's keys")
        }
        #expect(erased != nil)
        #expect(try await server.cli("EXISTS", userKey) == "0")
        #expect(try await store.erase(userID: opened.userID) == nil)
        await fixture.close()
    }

    @Test func refreshTokensExpire() async throws {
        let fixture = try await Fixture()
        let store = fixture.sessionStore(refreshTTL: .milliseconds(300))
        let opened = try await store.open(phone: try phone("9876543210"), channel: .otp)
        let token = opened.refreshToken
        let tokenKey = "pg:rt:{\(token.familyID)}:\(token.sha256Hex)"
        let familyKey = "pg:rtfam:{\(token.familyID)}"
        // Both records carry the refresh TTL.
        let ttl = try #require(Int64(try await fixture.server.cli("PTTL", familyKey)))
        #expect(ttl <= 300)
        try await eventually(timeout: .seconds(10), interval: .milliseconds(25)) {
            try await fixture.server.cli("EXISTS", tokenKey) == "0"
        }
        try await eventually(timeout: .seconds(10), interval: .milliseconds(25)) {
            try await fixture.server.cli("EXISTS", familyKey) == "0"
        }
        #expect(isRefused(try await store.rotate(token)))
        // The user outlives the session; a new login works.
        let again = try await store.open(phone: try phone("9876543210"), channel: .otp)
        #expect(again.userID == opened.userID)
        #expect(!again.isNewUser)
        await fixture.close()
    }

    @Test func logoutRevokesOnlyThatSessionOfThatUser() async throws {
        let fixture = try await Fixture()
        let store = fixture.sessionStore()
        let driver = try phone("9876543210")
        let one = try await store.open(phone: driver, channel: .otp)
        let two = try await store.open(phone: driver, channel: .otp)
        let stranger = try await store.open(phone: try phone("7012345678"), channel: .otp)

        // Session one, after a rotation: its current token dies with it.
        let current = try #require(rotated(try await store.rotate(one.refreshToken))).successor
        let revoked = try await store.logout(userID: one.userID, sessionID: one.refreshToken.familyID, refreshToken: current)
        #expect(revoked == 1)
        #expect(isRefused(try await store.rotate(current)))
        #expect(try await fixture.server.cli("HGET", "pg:rtfam:{\(one.refreshToken.familyID)}", "state") == "revoked")
        #expect(Int64(try await fixture.server.cli("ZSCORE", "pg:revoked-sessions", one.refreshToken.familyID)) != nil)

        // Session two of the same user is untouched.
        let twoNext = try #require(rotated(try await store.rotate(two.refreshToken)))
        #expect(twoNext.userID == one.userID)

        // Logging out of session two while presenting the stranger's token revokes session
        // two only: the stranger's session belongs to another user.
        let count = try await store.logout(userID: two.userID, sessionID: two.refreshToken.familyID, refreshToken: stranger.refreshToken)
        #expect(count == 1)
        #expect(isRefused(try await store.rotate(twoNext.successor)))
        #expect(try await fixture.server.cli("ZSCORE", "pg:revoked-sessions", stranger.refreshToken.familyID) == "")
        let strangerNext = try #require(rotated(try await store.rotate(stranger.refreshToken)))
        #expect(strangerNext.userID == stranger.userID)
        await fixture.close()
    }

    @Test func logoutAlsoRevokesThePresentedTokensSessionOfTheSameUser() async throws {
        let fixture = try await Fixture()
        let store = fixture.sessionStore()
        let driver = try phone("9876543210")
        let one = try await store.open(phone: driver, channel: .otp)
        let two = try await store.open(phone: driver, channel: .otp)
        let three = try await store.open(phone: driver, channel: .otp)
        // Access token of session one, refresh token of session two.
        let count = try await store.logout(userID: one.userID, sessionID: one.refreshToken.familyID, refreshToken: two.refreshToken)
        #expect(count == 2)
        #expect(isRefused(try await store.rotate(one.refreshToken)))
        #expect(isRefused(try await store.rotate(two.refreshToken)))
        #expect(rotated(try await store.rotate(three.refreshToken)) != nil)
        // Without a refresh token: the access token's session only.
        #expect(try await store.logout(userID: one.userID, sessionID: three.refreshToken.familyID, refreshToken: nil) == 1)
        #expect(try await fixture.server.cli("HGET", "pg:rtfam:{\(three.refreshToken.familyID)}", "state") == "revoked")
        await fixture.close()
    }

    @Test func revokeAllSessionsEndsEveryRefreshToken() async throws {
        let fixture = try await Fixture()
        let store = fixture.sessionStore()
        let driver = try phone("9876543210")
        let sessions = [
            try await store.open(phone: driver, channel: .otp),
            try await store.open(phone: driver, channel: .partnerSDK(partnerID: "ptr_x"), driverID: "NY-1"),
            try await store.open(phone: driver, channel: .partnerSDK(partnerID: "ptr_y"), driverID: "Y-1"),
        ]
        let userID = sessions[0].userID
        // One of them has rotated: its current token is the successor.
        let rotatedToken = try #require(rotated(try await store.rotate(sessions[1].refreshToken))).successor
        let bystander = try await store.open(phone: try phone("9123456789"), channel: .otp)

        let before = Date()
        let revokedAt = try #require(try await store.revokeAllSessions(ofUser: userID))
        #expect(abs(revokedAt.timeIntervalSince(before)) < 5)

        #expect(isRefused(try await store.rotate(sessions[0].refreshToken)))
        #expect(isRefused(try await store.rotate(rotatedToken)))
        #expect(isRefused(try await store.rotate(sessions[2].refreshToken)))
        #expect(rotated(try await store.rotate(bystander.refreshToken)) != nil)

        let milliseconds = Int64((revokedAt.timeIntervalSince1970 * 1000).rounded())
        #expect(try await fixture.server.cli("ZSCORE", "pg:revoked-users", userID) == String(milliseconds))
        #expect(try await fixture.server.cli("HGET", "pg:user:{\(userID)}", "revoked_before") == String(milliseconds))
        #expect(try await fixture.server.cli("ZSCORE", "pg:revoked-users", bystander.userID) == "")

        // Unknown or malformed users: nothing to revoke.
        #expect(try await store.revokeAllSessions(ofUser: "usr_0123456789abcdef01234567") == nil)
        #expect(try await store.revokeAllSessions(ofUser: "usr_nothex") == nil)
        #expect(try await store.revokeAllSessions(ofUser: "") == nil)
        #expect(try await store.revokeAllSessions(ofUser: "usr_0123456789abcdef01234567}x") == nil)
        #expect(try await store.revokeAllSessions(ofUser: userID.uppercased()) == nil)
        #expect(try await fixture.server.cli("ZCARD", "pg:revoked-users") == "1")
        #expect(try await fixture.server.cli("EXISTS", "pg:user:{usr_0123456789abcdef01234567}") == "0")

        // A new login still works and carries the marker.
        let fresh = try await store.open(phone: driver, channel: .otp)
        #expect(fresh.userID == userID)
        #expect(!fresh.isNewUser)
        let marker = try #require(fresh.revokedBefore)
        #expect(abs(marker.timeIntervalSince(revokedAt)) < 0.001)
        #expect(rotated(try await store.rotate(fresh.refreshToken)) != nil)
        await fixture.close()
    }
}
