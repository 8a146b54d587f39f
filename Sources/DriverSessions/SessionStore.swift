import DriverTokens
import Foundation
import RedisClient

/// Users and their login sessions in Redis: the phone → user index, refresh-token families
/// with single-use rotation and reuse detection, logout and "revoke every session".
///
/// Every operation is one script run (one round trip); see ``SessionScripts`` for the rules
/// each one enforces atomically.
public struct SessionStore: Sendable {
    let redis: RedisConnectionPool
    let hasher: PhoneHasher
    /// Lifetime of each refresh token (`tokens.refresh_ttl`); a rotation renews the session.
    public let refreshTTL: Duration
    /// How long a revocation must be remembered: until every access token it covers has
    /// expired (`tokens.access_ttl`), plus a minute for leeway and clock skew.
    public let revocationRetention: Duration

    public init(redis: RedisConnectionPool, hasher: PhoneHasher, refreshTTL: Duration, accessTTL: Duration) {
        self.redis = redis
        self.hasher = hasher
        self.refreshTTL = refreshTTL
        self.revocationRetention = accessTTL + .seconds(60)
    }

    /// An opaque user id: `usr_` and 96 random bits.
    public static func newUserID() -> String {
        "usr_" + Hex.random(byteCount: 12)
    }

    /// Whether `text` could be a user id this store made (checked before it reaches a key).
    public static func isValidUserID(_ text: some StringProtocol) -> Bool {
        text.hasPrefix("usr_") && Hex.isLowercase(text.dropFirst(4), count: 24)
    }

    /// Opens a login session for the phone's user, creating the user on first login.
    ///
    /// - Parameters:
    ///   - driverID: the partner's id for the driver, kept on the user per partner (SDK channel).
    ///   - name: the driver's name as the partner knows it, if given.
    public func open(phone: PhoneNumber, channel: AccessTokenChannel, driverID: String? = nil, name: String? = nil) async throws -> OpenedSession {
        let tag = hasher.tag(for: phone)
        let token = RefreshToken.newFamily()
        let tokenHash = token.sha256Hex
        // A clash with an existing id is astronomically unlikely; retry rather than assume.
        for _ in 0..<3 {
            let reply = try await redis.run(
                SessionScripts.openSession,
                keys: [
                    SessionKeys.phone(tag),
                    SessionKeys.family(token.familyID),
                    SessionKeys.refreshToken(family: token.familyID, hash: tokenHash),
                ],
                arguments: [
                    Self.newUserID(),
                    phone.masked,
                    String(refreshTTL.milliseconds),
                    channel.name,
                    channel.partnerID ?? "",
                    driverID ?? "",
                    name ?? "",
                    token.familyID,
                    tokenHash,
                ]
            )
            guard let parts = reply.array, parts.count == 3, let userID = parts[0].string else {
                throw RedisError.protocolViolation("session-open returned \(reply)")
            }
            guard !userID.isEmpty else { continue }
            return OpenedSession(
                userID: userID,
                isNewUser: parts[1].int == 1,
                refreshToken: token,
                revokedBefore: parts[2].int.map { Date(timeIntervalSince1970: Double($0) / 1000) }
            )
        }
        throw RedisError.protocolViolation("session-open found every candidate user id taken")
    }

    /// Spends `presented` and stores its successor, or detects reuse (see ``RefreshRotation``).
    public func rotate(_ presented: RefreshToken) async throws -> RefreshRotation {
        let successor = presented.successor()
        let successorHash = successor.sha256Hex
        let family = presented.familyID
        let reply = try await redis.run(
            SessionScripts.rotateRefreshToken,
            keys: [
                SessionKeys.refreshToken(family: family, hash: presented.sha256Hex),
                SessionKeys.family(family),
                SessionKeys.refreshToken(family: family, hash: successorHash),
            ],
            arguments: [String(refreshTTL.milliseconds), family, successorHash, String(revocationRetention.milliseconds)]
        )
        guard let parts = reply.array, let verdict = parts.first?.string else {
            throw RedisError.protocolViolation("refresh-rotate returned \(reply)")
        }
        switch verdict {
        case "rotated":
            guard parts.count == 4, let userID = parts[1].string, let channelName = parts[2].string,
                let channel = Self.channel(channelName, partnerID: parts[3].string ?? "")
            else { throw RedisError.protocolViolation("refresh-rotate returned a malformed session") }
            return .rotated(userID: userID, channel: channel, successor: successor)
        case "reused":
            return .reused(userID: parts.count > 1 ? parts[1].string ?? "" : "", sessionID: family)
        default:
            return .refused
        }
    }

    /// Logs out: revokes the access token's session, and the presented refresh token's
    /// session when it belongs to the same user. Returns how many sessions were revoked.
    @discardableResult
    public func logout(userID: String, sessionID: String, refreshToken: RefreshToken?) async throws -> Int {
        let presentedFamily = refreshToken?.familyID ?? ""
        let presentedKey = refreshToken.map { SessionKeys.refreshToken(family: $0.familyID, hash: $0.sha256Hex) } ?? SessionKeys.family(sessionID)
        let reply = try await redis.run(
            SessionScripts.logout,
            keys: [SessionKeys.family(sessionID), presentedKey],
            arguments: [userID, sessionID, String(revocationRetention.milliseconds), presentedFamily]
        )
        return Int(reply.int ?? 0)
    }

    /// Ends every session of the user: refresh tokens stop at once, access tokens issued
    /// before the returned time through the published `revoked_before` marker.
    /// Returns nil when there is no such user.
    public func revokeAllSessions(ofUser userID: String) async throws -> Date? {
        guard Self.isValidUserID(userID) else { return nil }
        let reply = try await redis.run(
            SessionScripts.revokeUser,
            keys: [SessionKeys.user(userID), SessionKeys.userSessions(userID)],
            arguments: [userID, String(revocationRetention.milliseconds)]
        )
        guard let milliseconds = reply.int else { return nil }
        return Date(timeIntervalSince1970: Double(milliseconds) / 1000)
    }

    private static func channel(_ name: String, partnerID: String) -> AccessTokenChannel? {
        switch name {
        case "otp": .otp
        case "partner_sdk" where !partnerID.isEmpty: .partnerSDK(partnerID: partnerID)
        default: nil
        }
    }
}
