import Crypto
import Foundation
import GatewayContract
import GatewayPrimitives
import RedisClient

/// Partners' members in Redis (``Member``): one record per person, the partner's list of them,
/// and an index from each email to its member, which is how a sign-in finds them.
///
/// Nothing is cached in process: a portal call reads its session and member on every request
/// (``MemberSessions``), so a removal or a new role applies on every instance from the next one.
public struct MemberRegistry: Sendable {
    let redis: RedisConnectionPool

    public init(redis: RedisConnectionPool) {
        self.redis = redis
    }

    /// Invites `email` to the partner, under `id` (`mbr_` and 16 hex, as a state file names
    /// it) or an id issued here. An address already a member's is
    /// ``KeyRegistryError/Code/emailTaken``, whichever partner it belongs to; an id taken
    /// already is ``KeyRegistryError/Code/alreadyExists``; either way nothing is written.
    public func create(
        id: String? = nil, partnerID: String, email: String, name: String, role: MemberRole, createdBy: String, now: Date = Date()
    ) async throws -> Member {
        guard try await KeyRegistry(redis: redis).partner(partnerID) != nil else {
            throw KeyRegistryError(.partnerNotFound, "no partner \(partnerID)")
        }
        // Stored with millisecond precision: the member answered is the one read back later.
        let now = Date(timeIntervalSince1970: (now.timeIntervalSince1970 * 1000).rounded(.down) / 1000)
        let member = Member(
            id: id ?? "mbr_" + RandomHex.string(byteCount: 8), partnerID: partnerID, email: email, name: name, role: role,
            createdAt: now, createdBy: createdBy
        )
        if id != nil, try await redis.send(.exists(RegistryKeys.member(member.id))).int == 1 { throw Self.idTaken(member.id) }
        // Three slots: the address first (an entry whose member never came to be is taken
        // over by the next invitation of it), then the record, then the partner's list; a
        // failure in between leaves nobody who can sign in or be listed.
        let index = RegistryKeys.memberEmail(hash: Self.emailHash(email))
        let holder = try await redis.send(.get(index)).string
        if let holder, try await self.member(id: holder) != nil { throw Self.taken(email) }
        let claimed = try await redis.run(MemberScripts.claimEmail, keys: [index], arguments: [member.id, holder ?? ""])
        guard claimed.int == 1 else { throw Self.taken(email) }
        let created = try await redis.run(MemberScripts.create, keys: [RegistryKeys.member(member.id)], arguments: Self.fields(of: member))
        guard created.int == 1 else {
            // The id was taken meanwhile: the address goes back, still naming nobody.
            _ = try await redis.run(MemberScripts.releaseEmail, keys: [index], arguments: [member.id])
            throw Self.idTaken(member.id)
        }
        _ = try await redis.send(.zadd(RegistryKeys.partnerMembers(partnerID), score: KeyRegistry.timestamp(now), member: member.id))
        return member
    }

    public func member(id: String) async throws -> Member? {
        guard Member.isID(id) else { return nil }
        return Self.member(id: id, from: KeyRegistry.hashFields(try await redis.send(.hgetall(RegistryKeys.member(id)))))
    }

    /// The member with this (lowercase) email, or nil. The same two round trips either way: a
    /// sign-in code's answer must not tell a member's address by its time.
    public func member(email: String) async throws -> Member? {
        let id = try await redis.send(.get(RegistryKeys.memberEmail(hash: Self.emailHash(email)))).string
        let fields = KeyRegistry.hashFields(try await redis.send(.hgetall(RegistryKeys.member(id ?? Self.nobody))))
        guard let id, let member = Self.member(id: id, from: fields), member.email == email else { return nil }
        return member
    }

    /// A member id no member has (not `mbr_` and 16 hex): what an unknown address reads.
    static let nobody = "none"

    /// Up to `limit` of the partner's members, oldest first, after the member `after`; `more`
    /// tells whether any follow.
    public func members(partnerID: String, after: String?, limit: Int) async throws -> (members: [Member], more: Bool) {
        guard try await KeyRegistry(redis: redis).partner(partnerID) != nil else {
            throw KeyRegistryError(.partnerNotFound, "no partner \(partnerID)")
        }
        let list = RegistryKeys.partnerMembers(partnerID)
        var start = 0
        if let after {
            guard let rank = try await redis.send(.zrank(list, after)).int else {
                throw KeyRegistryError(.unknownCursor, "no member \(after) to continue after")
            }
            start = Int(rank) + 1
        }
        var ids = try await redis.send(.zrange(list, start, start + limit)).array?.compactMap(\.string) ?? []
        let more = ids.count > limit
        if more { ids.removeLast() }
        guard !ids.isEmpty else { return ([], false) }
        let replies = try await redis.pipeline(ids.map { .hgetall(RegistryKeys.member($0)) })
        return (zip(ids, replies).compactMap { Self.member(id: $0, from: KeyRegistry.hashFields($1)) }, more)
    }

    /// Changes a member's name or role (nil leaves it) in one step; every open session of
    /// theirs acts in the new role from its next call. With `revision`, only if the member is
    /// still at it (``KeyRegistryError/Code/revisionChanged`` otherwise, and nothing changes).
    public func update(id: String, name: String?, role: MemberRole?, revision: Int? = nil) async throws -> Member {
        var fields: [String] = []
        if let name { fields += ["name", name] }
        if let role { fields += ["role", role.rawValue] }
        if !fields.isEmpty {
            let reply = try await redis.run(MemberScripts.update, keys: [RegistryKeys.member(id)], arguments: [revision.map(String.init) ?? ""] + fields)
            if reply.int == -1, let revision { throw Self.stale(id, expected: revision) }
            guard reply.int == 1 else { throw KeyRegistryError(.memberNotFound, "no member \(id)") }
        }
        guard let member = try await member(id: id) else { throw KeyRegistryError(.memberNotFound, "no member \(id)") }
        return member
    }

    /// Removes a member: their record and every session in one step (each session of theirs is
    /// refused from then on, on every instance), then the partner's list and the address. With
    /// `revision`, only if the member is still at it.
    @discardableResult
    public func remove(id: String, revision: Int? = nil) async throws -> Member {
        guard let member = try await member(id: id) else { throw KeyRegistryError(.memberNotFound, "no member \(id)") }
        let set = RegistryKeys.memberSessions(id)
        let sessions = try await redis.send(.smembers(set)).array?.compactMap(\.string) ?? []
        let reply = try await redis.run(
            MemberScripts.remove, keys: [RegistryKeys.member(id), set] + sessions.map { RegistryKeys.memberSession(id, hash: $0) },
            arguments: [revision.map(String.init) ?? ""]
        )
        if reply.int == -1, let revision { throw Self.stale(id, expected: revision) }
        guard reply.int == 1 else { throw KeyRegistryError(.memberNotFound, "no member \(id)") }
        _ = try await redis.send(.zrem(RegistryKeys.partnerMembers(member.partnerID), [id]))
        _ = try await redis.run(MemberScripts.releaseEmail, keys: [RegistryKeys.memberEmail(hash: Self.emailHash(member.email))], arguments: [id])
        return member
    }

    /// The ids of every member of the partner.
    func memberIDs(partnerID: String) async throws -> [String] {
        try await redis.send(.zrange(RegistryKeys.partnerMembers(partnerID), 0, -1)).array?.compactMap(\.string) ?? []
    }

    private static func taken(_ email: String) -> KeyRegistryError {
        KeyRegistryError(.emailTaken, "\(email) is already a member of a partner; one address is one member")
    }

    private static func idTaken(_ id: String) -> KeyRegistryError {
        KeyRegistryError(.alreadyExists, "member \(id) exists already")
    }

    private static func stale(_ id: String, expected: Int) -> KeyRegistryError {
        KeyRegistryError(.revisionChanged, RevisionPrecondition.staleMessage("member \(id)", expected: expected))
    }

    /// Index entries are named by the address's SHA-256: an address may hold `{` or `}`,
    /// which would move a hash tag.
    static func emailHash(_ email: String) -> String {
        Hex.encode(SHA256.hash(data: Array(email.utf8)), count: SHA256.byteCount)
    }

    static func fields(of member: Member) -> [String] {
        [
            "partner_id", member.partnerID, "email", member.email, "name", member.name, "role", member.role.rawValue,
            "created_at", KeyRegistry.timestamp(member.createdAt), "created_by", member.createdBy, "rev", String(member.revision),
        ]
    }

    static func member(id: String, from fields: [String: String]) -> Member? {
        guard let partnerID = fields["partner_id"], let email = fields["email"], let role = fields["role"].flatMap(MemberRole.init(rawValue:))
        else { return nil }
        var member = Member(
            id: id, partnerID: partnerID, email: email, name: fields["name"] ?? "", role: role,
            createdAt: KeyRegistry.date(fields["created_at"]) ?? Date(timeIntervalSince1970: 0), createdBy: fields["created_by"] ?? ""
        )
        // Members from before revisions are at 0, as partners and keys are.
        member.revision = fields["rev"].flatMap { Int($0) } ?? 0
        return member
    }
}
