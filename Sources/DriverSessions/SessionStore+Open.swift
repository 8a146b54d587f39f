import DriverTokens
import Foundation
import GatewayPrimitives
import RedisClient

extension SessionStore {
    /// A user's session set is pruned of expired sessions once it holds more than this.
    static let pruneThreshold: Int64 = 32

    /// Opens a login session for the phone's user, creating the user on first login.
    ///
    /// The phone index is read (unless the caller read it during a step of its own), then one
    /// script in the user's slot creates the user and claims the index on a first login,
    /// adds the session to the user's set and creates its family: a new user's id is drawn
    /// in the phone's slot and the family's in its user's (``RedisHashSlot/randomTag(prefix:randomDigits:inSlot:)``),
    /// so the script's keys share a slot on Redis Cluster. So the index never names a missing
    /// user, and no working session is ever missing from the set "revoke every session"
    /// reads; a first login that finds the index taken joins its user instead.
    ///
    /// On the partner SDK channel, ``OpenedSession/isNewUser`` says whether this partner
    /// enrolled the driver (gave a driver id) before, not whether the phone was registered:
    /// a partner learns nothing of other partners' or the driver's own logins.
    ///
    /// - Parameters:
    ///   - driverID: the partner's id for the driver, kept on the user per partner (SDK channel);
    ///     it is what marks the driver as enrolled by that partner.
    ///   - name: the driver's name as the partner knows it, if given, kept per partner too.
    ///   - owner: the phone's owner as ``owner(of:)`` found it, looked up by the caller during a
    ///     step of its own (a rate-limit check): the login then takes one round trip fewer.
    public func open(
        phone: PhoneNumber, channel: AccessTokenChannel, driverID: String? = nil, name: String? = nil, owner: PhoneOwner? = nil
    ) async throws -> OpenedSession {
        let tag = hasher.tag(for: phone)
        let index = SessionKeys.phone(tag)
        let partnerID = channel.partnerID ?? ""
        var known = owner?.phoneTag == tag ? owner : nil
        // Each retry follows a race or a clash: a first login that another won, a user erased
        // since the index was read, a candidate or family id that exists already.
        for _ in 0..<4 {
            let indexed = if let known { known.userID } else { try await redis.send(.get(index)).string }
            let userID = indexed ?? Self.newUserID(inSlot: RedisHashSlot.of(index))
            let familyID = Self.newFamilyID(inSlot: RedisHashSlot.of(SessionKeys.user(userID)))
            guard let token = RefreshToken.newFamily(id: familyID) else {
                throw RedisError.protocolViolation("session-open drew a malformed family id")
            }
            var keys = [
                SessionKeys.user(userID), SessionKeys.userSessions(userID),
                SessionKeys.family(familyID), SessionKeys.refreshToken(family: familyID, hash: token.sha256Hex),
            ]
            if indexed == nil { keys.append(index) }
            let reply = try await redis.run(
                SessionScripts.openSession,
                keys: keys,
                arguments: [
                    phone.masked, partnerID, driverID ?? "", name ?? "", tag,
                    familyID, userID, String(refreshTTL.inMilliseconds), channel.name, token.sha256Hex,
                ]
            )
            guard let parts = reply.array, let verdict = parts.first?.string else {
                throw RedisError.protocolViolation("session-open returned \(reply)")
            }
            switch verdict {
            case "ok" where parts.count == 4:
                let sessionCount = parts[2].int ?? 0
                if sessionCount > Self.pruneThreshold {
                    try await pruneExpiredSessions(ofUser: userID)
                }
                // A partner's "new" is its own first enrolment; only the driver (OTP) learns
                // whether the phone was known to the gateway.
                let isNew = partnerID.isEmpty ? indexed == nil : parts[3].string == "1"
                return OpenedSession(
                    userID: userID,
                    isNewUser: isNew,
                    refreshToken: token,
                    revokedBefore: parts[1].string.flatMap { Int64($0) }.map { Date(timeIntervalSince1970: Double($0) / 1000) }
                )
            case "claimed" where parts.count == 2:
                known = PhoneOwner(phoneTag: tag, userID: parts[1].string)
            case "gone":
                // The user was erased after the index was read (or before it was released):
                // the entry goes if it still names them, and the phone starts over as new.
                if let indexed {
                    _ = try await redis.run(SessionScripts.releasePhone, keys: [index], arguments: [indexed])
                }
                known = PhoneOwner(phoneTag: tag, userID: nil)
            case "taken", "clash":
                known = PhoneOwner(phoneTag: tag, userID: indexed)
            default:
                throw RedisError.protocolViolation("session-open returned \(verdict) with \(parts.count) values")
            }
        }
        throw RedisError.protocolViolation("session-open could not open a session in four attempts")
    }

    /// The user a phone belongs to now, if any (one read of the phone index), for
    /// ``open(phone:channel:driverID:name:owner:)``.
    public func owner(of phone: PhoneNumber) async throws -> PhoneOwner {
        let tag = hasher.tag(for: phone)
        return PhoneOwner(phoneTag: tag, userID: try await redis.send(.get(SessionKeys.phone(tag))).string)
    }

    /// Drops up to 8 random expired sessions from the user's set: constant work per login
    /// that keeps the set close to the user's live sessions, however many logins a partner
    /// mints for one driver. A family found missing is buried first (a revoked tombstone in
    /// its own slot), so a login of an older gateway that joined the set but has not created
    /// its family yet cannot create it after this removed it from the set; that login starts
    /// over.
    private func pruneExpiredSessions(ofUser userID: String) async throws {
        let set = SessionKeys.userSessions(userID)
        let sample = try await redis.send(.srandmember(set, count: 8)).array?.compactMap(\.string) ?? []
        let tombstone = String(Self.tombstoneLifetime.inMilliseconds)
        let expired = try await withThrowingTaskGroup(of: String?.self) { group in
            for family in sample {
                group.addTask {
                    let existed = try await redis.run(SessionScripts.buryIfMissing, keys: [SessionKeys.family(family)], arguments: [tombstone])
                    return existed.int == 0 ? family : nil
                }
            }
            return try await group.reduce(into: [String]()) { if let family = $1 { $0.append(family) } }
        }
        guard !expired.isEmpty else { return }
        _ = try await redis.send(.srem(set, expired))
    }
}
