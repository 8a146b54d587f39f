import DriverTokens
import Foundation
import GatewayPrimitives
import RedisClient

/// Users and their login sessions in Redis: the phone → user index, refresh-token families
/// with single-use rotation, the reuse interval and reuse detection, logout and revocation.
///
/// Each step is one script on one hash tag (``SessionScripts``); steps that change entities
/// of several tags are sequences of such scripts, ordered so that a failure between two of
/// them never leaves a session or user usable that should not be (docs/DECISIONS.md,
/// "Sessions on Redis Cluster").
public struct SessionStore: Sendable {
    let redis: RedisConnectionPool
    let hasher: PhoneHasher
    let successorKey: RefreshSuccessorKey
    /// Lifetime of each refresh token (`tokens.refresh_ttl`); a rotation renews the session.
    public let refreshTTL: Duration
    /// How long after a rotation its spent token may be presented again and get the same
    /// successor (`tokens.refresh_reuse_interval`); zero: never, every reuse revokes.
    public let reuseInterval: Duration
    /// How long a revocation must be remembered: until every access token it covers has
    /// expired (`tokens.access_ttl`), plus a minute for leeway and clock skew.
    public let revocationRetention: Duration
    /// How long the tombstone of a family revoked before it was created is kept: far longer
    /// than the few milliseconds between a login's two steps.
    static let tombstoneLifetime = Duration.seconds(600)

    public init(
        redis: RedisConnectionPool, hasher: PhoneHasher, successorKey: RefreshSuccessorKey,
        refreshTTL: Duration, accessTTL: Duration, reuseInterval: Duration
    ) {
        self.redis = redis
        self.hasher = hasher
        self.successorKey = successorKey
        self.refreshTTL = refreshTTL
        self.reuseInterval = reuseInterval
        self.revocationRetention = accessTTL + .seconds(60)
        RedisHashSlot.preparePlacement()
    }

    /// An opaque user id, `usr_` and 24 hex digits (76 random bits), drawn so that the user's
    /// keys land in `slot`: a new user's in its phone's (``open(phone:channel:driverID:name:owner:)``).
    public static func newUserID(inSlot slot: Int) -> String {
        RedisHashSlot.randomTag(prefix: "usr_", randomDigits: 24 - RedisHashSlot.placementDigits, inSlot: slot)
    }

    /// A login session's family id (16 hex digits, 44 random bits) whose keys land in `slot`:
    /// its user's. A clash with a live family or a tombstone is refused by the script that
    /// opens the session, which then draws again.
    static func newFamilyID(inSlot slot: Int) -> String {
        RedisHashSlot.randomTag(randomDigits: RefreshToken.familyIDLength - RedisHashSlot.placementDigits, inSlot: slot)
    }

    /// Whether `text` could be a user id this store made (checked before it reaches a key).
    public static func isValidUserID(_ text: some StringProtocol) -> Bool {
        text.hasPrefix("usr_") && Hex.isLowercase(text.dropFirst(4), count: 24)
    }

    /// How many spent tokens' hashes a session keeps, newest first, so that a replayed one is
    /// reuse after its own record expired: a session refreshed every 15 minutes without a
    /// pause keeps ten days' worth, at about 100 bytes each.
    static let spentTokensKept = 1000

    /// Spends `presented` and stores its successor, answers a retry within the reuse
    /// interval with that same successor, or detects reuse and revokes the session (see
    /// ``RefreshRotation``).
    public func rotate(_ presented: RefreshToken) async throws -> RefreshRotation {
        let successor = presented.successor(derivedWith: successorKey)
        let successorHash = successor.sha256Hex
        let presentedHash = presented.sha256Hex
        let family = presented.familyID
        let reply = try await redis.run(
            SessionScripts.rotateRefreshToken,
            keys: [
                SessionKeys.refreshToken(family: family, hash: presentedHash),
                SessionKeys.family(family),
                SessionKeys.refreshToken(family: family, hash: successorHash),
                SessionKeys.spentTokens(family: family),
            ],
            arguments: [
                String(refreshTTL.inMilliseconds), successorHash, presentedHash, String(reuseInterval.inMilliseconds), String(Self.spentTokensKept),
            ]
        )
        guard let parts = reply.array, let verdict = parts.first?.string else {
            throw RedisError.protocolViolation("refresh-rotate returned \(reply)")
        }
        switch verdict {
        case "rotated", "retried":
            guard parts.count == 4, let userID = parts[1].string, let channelName = parts[2].string,
                let channel = Self.channel(channelName, partnerID: parts[3].string ?? "")
            else { throw RedisError.protocolViolation("refresh-rotate returned a malformed session") }
            return verdict == "rotated"
                ? .rotated(userID: userID, channel: channel, successor: successor)
                : .retried(userID: userID, channel: channel, current: successor)
        case "reused":
            let userID = parts.count > 1 ? parts[1].string ?? "" : ""
            _ = try await revokeSessions([family], ofUser: "")
            return .reused(userID: userID, sessionID: family)
        default:
            return .refused
        }
    }

    /// Logs out: revokes the access token's session, and the presented refresh token's
    /// session when it belongs to the same user. Returns how many sessions were revoked.
    @discardableResult
    public func logout(userID: String, sessionID: String, refreshToken: RefreshToken?) async throws -> Int {
        var families = [sessionID]
        if let refreshToken, refreshToken.familyID != sessionID {
            // Whose token it is (its family's user) never changes, so reading it first is as
            // good as checking it inside the revocation; a stranger's session is never even
            // announced.
            let key = SessionKeys.refreshToken(family: refreshToken.familyID, hash: refreshToken.sha256Hex)
            let replies = try await redis.pipeline([.exists(key), .hget(SessionKeys.family(refreshToken.familyID), "user")])
            if try replies[0].throwingServerError().int == 1, try replies[1].throwingServerError().string == userID {
                families.append(refreshToken.familyID)
            }
        }
        return try await revokeSessions(families, ofUser: userID)
    }

    /// Ends every session of the user: refresh tokens stop at once, access tokens issued
    /// before the returned time through the published `revoked_before` marker.
    /// Returns nil when there is no such user.
    public func revokeAllSessions(ofUser userID: String) async throws -> Date? {
        guard Self.isValidUserID(userID) else { return nil }
        let reply = try await redis.run(
            SessionScripts.markUserRevoked,
            keys: [SessionKeys.user(userID), SessionKeys.userSessions(userID)],
            arguments: []
        )
        guard let parts = reply.array, let milliseconds = parts.first?.string else { return nil }
        let families = parts.dropFirst().compactMap(\.string)
        // The sessions are listed (pending) before the user is announced: a stop in between
        // must not leave a session whose refresh token mints access tokens newer than the
        // user's marker. They stay in the user's set, revoked, until they expire: an erasure
        // finds them there (a revoked family still names its user); listings skip them.
        try await announce(families, phase: "pending")
        _ = try await redis.run(
            SessionScripts.announceUser,
            keys: [SessionKeys.revokedUsers],
            arguments: [userID, milliseconds, String(revocationRetention.inMilliseconds)]
        )
        if !families.isEmpty {
            _ = try await revokeFamilies(families, ofUser: "")
            try await announce(families, phase: "final")
        }
        return Date(timeIntervalSince1970: Double(Int64(milliseconds) ?? 0) / 1000)
    }

    /// Runs every step of revoking `sessionID` again: for a session listed as revoked whose
    /// family step may not have happened (see ``revokeSessions(_:ofUser:)``).
    public func completeRevocation(ofSession sessionID: String) async throws {
        _ = try await revokeSessions([sessionID], ofUser: "")
    }

    /// Revokes the sessions `families` (of `userID`, or of anyone when it is empty) in the
    /// order that never leaves one usable: listed as pending in the revoked-sessions set
    /// (every instance refuses their access tokens from then on, and the entry is never
    /// trimmed while pending), then each family revoked in its own slot (refresh tokens
    /// die), then the entries finalised. Returns how many families were revoked.
    ///
    /// Every step is idempotent: after a failure, running it again completes it.
    func revokeSessions(_ families: [String], ofUser userID: String) async throws -> Int {
        try await announce(families, phase: "pending")
        let revoked = try await revokeFamilies(families, ofUser: userID)
        try await announce(families, phase: "final")
        return revoked
    }

    /// The middle step: each family marked revoked in its own slot (in parallel); how many
    /// existed and belonged to `userID` (any user when empty).
    private func revokeFamilies(_ families: [String], ofUser userID: String) async throws -> Int {
        let tombstone = String(Self.tombstoneLifetime.inMilliseconds)
        let results = try await withThrowingTaskGroup(of: Int64.self) { group in
            for family in families {
                group.addTask {
                    try await redis.run(
                        SessionScripts.revokeFamily, keys: [SessionKeys.family(family)], arguments: [userID, tombstone]
                    ).int ?? 0
                }
            }
            return try await group.reduce(into: [Int64]()) { $0.append($1) }
        }
        return results.filter { $0 == 1 }.count
    }

    func announce(_ families: [String], phase: String) async throws {
        guard !families.isEmpty else { return }
        _ = try await redis.run(
            SessionScripts.announceSessions,
            keys: [SessionKeys.revokedSessions],
            arguments: [phase, String(revocationRetention.inMilliseconds)] + families
        )
    }

    static func channel(_ name: String, partnerID: String) -> AccessTokenChannel? {
        switch name {
        case "otp": .otp
        case "partner_sdk" where !partnerID.isEmpty: .partnerSDK(partnerID: partnerID)
        default: nil
        }
    }
}
