import DriverTokens
import Foundation
import GatewayPrimitives
import NIOCore
import RedisClient

extension SessionStore {
    /// A user's session set is pruned of expired sessions once it holds more than this.
    static let pruneThreshold: Int64 = 32

    /// Opens a login session for the phone's user, creating the user on first login.
    ///
    /// Three steps on three hash tags, in this order: the phone index is read (or, on a first
    /// login, the user is created and then claimed by the index), the session joins the
    /// user's set, and only then is its family created. So the index never names a missing
    /// user, and no working session is ever missing from the set "revoke every session"
    /// reads; a revocation that lands between the last two steps makes the login start over.
    /// On a first login the claim and the family go out together, one round trip for both:
    /// a family made for a user the index did not take is dropped with that user, its token
    /// never handed out.
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
        let profile = Profile(masked: phone.masked, partnerID: channel.partnerID ?? "", driverID: driverID ?? "", name: name ?? "")
        var known = owner?.phoneTag == tag ? owner : nil
        for _ in 0..<3 {
            let token = RefreshToken.newFamily()
            let joined = try await join(phoneTag: tag, profile: profile.with(phoneTag: tag), familyID: token.familyID, known: known)
            // A later attempt reads the index again, unless a lost claim just named its owner.
            known = nil
            if joined.sessionCount > Self.pruneThreshold {
                try await pruneExpiredSessions(ofUser: joined.userID)
            }
            let familyKeys = [SessionKeys.family(token.familyID), SessionKeys.refreshToken(family: token.familyID, hash: token.sha256Hex)]
            let created = try redis.start(
                SessionScripts.openFamily,
                keys: familyKeys,
                arguments: [joined.userID, String(refreshTTL.inMilliseconds), channel.name, channel.partnerID ?? "", token.sha256Hex]
            )
            if let claim = joined.claim {
                let claimedBy = try await claim.get().string
                if claimedBy != joined.userID {
                    // Another first login of this phone won: the candidate was never named by
                    // the index, so nobody can reach it or its family; both go, and the next
                    // attempt joins the winner.
                    _ = try? await created.get()
                    _ = try await redis.send(.del(familyKeys))
                    _ = try await redis.send(.del([SessionKeys.user(joined.userID), SessionKeys.userSessions(joined.userID)]))
                    guard let claimedBy else { throw RedisError.protocolViolation("phone-claim returned nothing") }
                    known = PhoneOwner(phoneTag: tag, userID: claimedBy)
                    continue
                }
            }
            guard try await created.get().int == 1 else { continue }
            return OpenedSession(
                userID: joined.userID,
                isNewUser: joined.isNew,
                refreshToken: token,
                revokedBefore: joined.revokedBefore.map { Date(timeIntervalSince1970: Double($0) / 1000) }
            )
        }
        throw RedisError.protocolViolation("session-open could not open a session in three attempts")
    }

    /// What a login records on the user.
    private struct Profile {
        let masked: String
        let partnerID: String
        let driverID: String
        let name: String
        var phoneTag = ""

        func with(phoneTag: String) -> Profile {
            var profile = self
            profile.phoneTag = phoneTag
            return profile
        }
    }

    private struct Joined {
        let userID: String
        let isNew: Bool
        let revokedBefore: Int64?
        let sessionCount: Int64
        /// A first login's claim of the phone index, sent and not yet answered: the owner the
        /// index names, this user if the claim won.
        var claim: EventLoopFuture<RedisValue>?
    }

    /// The user a phone belongs to now, if any (one read of the phone index), for
    /// ``open(phone:channel:driverID:name:owner:)``.
    public func owner(of phone: PhoneNumber) async throws -> PhoneOwner {
        let tag = hasher.tag(for: phone)
        return PhoneOwner(phoneTag: tag, userID: try await redis.send(.get(SessionKeys.phone(tag))).string)
    }

    /// The phone's user, created if needed, with `familyID` added to its sessions; `known`:
    /// the index as already read. A user created here comes with its claim of the index sent
    /// and not yet answered (``Joined/claim``).
    private func join(phoneTag: String, profile: Profile, familyID: String, known: PhoneOwner?) async throws -> Joined {
        let indexed = if let known { known.userID } else { try await redis.send(.get(SessionKeys.phone(phoneTag))).string }
        if let existing = indexed {
            if let joined = try await joinUser(existing, create: false, isNew: false, profile: profile, familyID: familyID) {
                return joined
            }
            // The user was erased after the index was read (or before it was released): the
            // entry goes if it still names them, and the phone starts over as a new user.
            _ = try await redis.run(SessionScripts.releasePhone, keys: [SessionKeys.phone(phoneTag)], arguments: [existing])
        }
        // A clash with an existing id is astronomically unlikely; retry rather than assume.
        for _ in 0..<3 {
            let candidate = Self.newUserID()
            guard var joined = try await joinUser(candidate, create: true, isNew: true, profile: profile, familyID: familyID) else { continue }
            joined.claim = try redis.start(SessionScripts.claimPhone, keys: [SessionKeys.phone(phoneTag)], arguments: [candidate])
            return joined
        }
        throw RedisError.protocolViolation("session-open found every candidate user id taken")
    }

    /// Runs ``SessionScripts/joinUser``; nil when creating and the id is taken, or when joining
    /// a user that no longer exists.
    private func joinUser(_ userID: String, create: Bool, isNew: Bool, profile: Profile, familyID: String) async throws -> Joined? {
        let reply = try await redis.run(
            SessionScripts.joinUser,
            keys: [SessionKeys.user(userID), SessionKeys.userSessions(userID)],
            arguments: [create ? "1" : "0", profile.masked, profile.partnerID, profile.driverID, profile.name, familyID, profile.phoneTag]
        )
        guard let parts = reply.array, let verdict = parts.first?.string else {
            throw RedisError.protocolViolation("session-join-user returned \(reply)")
        }
        if verdict == "taken" || verdict == "gone" { return nil }
        guard parts.count == 4 else { throw RedisError.protocolViolation("session-join-user returned \(parts.count) values") }
        // A partner's "new" is its own first enrolment; only the driver (OTP) learns whether
        // the phone was known to the gateway.
        let new = profile.partnerID.isEmpty ? isNew : parts[3].string == "1"
        return Joined(userID: userID, isNew: new, revokedBefore: parts[1].string.flatMap { Int64($0) }, sessionCount: parts[2].int ?? 0)
    }

    /// Drops up to 8 random expired sessions from the user's set: constant work per login
    /// that keeps the set close to the user's live sessions, however many logins a partner
    /// mints for one driver. A family found missing is buried first (a revoked tombstone in
    /// its own slot), so a login that joined the set but has not created its family yet
    /// cannot create it after this removed it from the set; that login starts over.
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
