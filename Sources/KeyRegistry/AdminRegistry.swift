import Foundation
import GatewayContract
import GatewayPrimitives
import RedisClient

/// Personal admin credentials in Redis: one record per person (`pg:admin:{id}`) holding the
/// hash of the current secret, an index from that hash to the id, and the list by creation.
///
/// Nothing is cached in process: every admin request reads the record, so a revocation or an
/// expiry is refused by every instance from the moment Redis holds it (admin traffic is a few
/// requests a second at most; two reads each cost nothing).
public struct AdminRegistry: Sendable {
    let redis: RedisConnectionPool

    public init(redis: RedisConnectionPool) {
        self.redis = redis
    }

    /// Creates a credential; the returned secret is its only copy. Under `id` (`adm_` and 16
    /// hex, as a state file names it) or an id issued here; an id taken already is
    /// ``KeyRegistryError/Code/alreadyExists``. It expires `expiresIn` from now or at
    /// `expiresAt`, whichever is given.
    public func create(
        id: String? = nil, name: String, role: AdminRole, expiresIn: Duration?, expiresAt: Date? = nil, createdBy: String, now: Date = Date()
    ) async throws -> (AdminSecret, AdminRecord) {
        let secret = AdminSecret.generate()
        // Stored with millisecond precision: the record answered is the one read back later.
        let now = Date(timeIntervalSince1970: (now.timeIntervalSince1970 * 1000).rounded(.down) / 1000)
        let record = AdminRecord(
            id: id ?? "adm_" + RandomHex.string(byteCount: 8),
            name: name,
            role: role,
            storedStatus: .active,
            createdAt: now,
            expiresAt: expiresAt ?? expiresIn.map { now.addingTimeInterval($0.inSeconds) },
            start: secret.start,
            tokenHash: secret.hash,
            createdBy: createdBy
        )
        // Three slots: the record first, then the index that makes the secret work, then the
        // list; a failure in between leaves a credential whose secret nobody was given.
        let created = try await redis.run(RegistryScripts.createAdmin, keys: [RegistryKeys.admin(record.id)], arguments: Self.fields(of: record))
        let listing = RedisCommand.zadd(RegistryKeys.admins, score: KeyRegistry.timestamp(now), member: record.id, onlyIfAbsent: true)
        guard created.int == 1 else {
            // As for partners: a record a cut-off create left unlisted is listed now.
            _ = try await redis.send(listing)
            throw KeyRegistryError(.alreadyExists, "admin \(record.id) exists already")
        }
        _ = try await redis.send(.set(RegistryKeys.adminToken(hash: record.tokenHash), record.id))
        _ = try await redis.send(listing)
        return (secret, record)
    }

    /// The credential whose current secret is `secret`, whatever its status; nil when none.
    public func record(for secret: AdminSecret) async throws -> AdminRecord? {
        let hash = secret.hash
        guard let id = try await redis.send(.get(RegistryKeys.adminToken(hash: hash))).string,
            let record = try await record(id: id), record.tokenHash == hash
        else { return nil }
        return record
    }

    public func record(id: String) async throws -> AdminRecord? {
        Self.record(id: id, from: try await redis.send(.hgetall(RegistryKeys.admin(id))))
    }

    /// Up to `limit` credentials, oldest first, after the credential `after`; `more` tells
    /// whether any follow. Credentials are never deleted, so the order is stable.
    public func list(after: String?, limit: Int) async throws -> (records: [AdminRecord], more: Bool) {
        var start = 0
        if let after {
            guard let rank = try await redis.send(.zrank(RegistryKeys.admins, after)).int else {
                throw KeyRegistryError(.unknownCursor, "no admin \(after) to continue after")
            }
            start = Int(rank) + 1
        }
        var ids = try await redis.send(.zrange(RegistryKeys.admins, start, start + limit)).array?.compactMap(\.string) ?? []
        let more = ids.count > limit
        if more { ids.removeLast() }
        guard !ids.isEmpty else { return ([], false) }
        let replies = try await redis.pipeline(ids.map { .hgetall(RegistryKeys.admin($0)) })
        return (zip(ids, replies).compactMap { Self.record(id: $0, from: $1) }, more)
    }

    /// Ends a credential at once. Revoking one revoked before is ``KeyRegistryError/Code/adminNotActive``.
    /// With `revision`, only if the credential is still at it.
    public func revoke(id: String, revision: Int? = nil) async throws -> AdminRecord {
        let reply = try await redis.run(RegistryScripts.revokeAdmin, keys: [RegistryKeys.admin(id)], arguments: [revision.map(String.init) ?? ""])
        switch reply.int {
        case 1: break
        case 2: throw KeyRegistryError(.adminNotActive, "admin \(id) is already revoked")
        case -1: throw KeyRegistryError(.revisionChanged, RevisionPrecondition.staleMessage("admin \(id)", expected: revision ?? 0))
        default: throw KeyRegistryError(.adminNotFound, "no admin \(id)")
        }
        guard let record = try await record(id: id) else { throw KeyRegistryError(.adminNotFound, "no admin \(id)") }
        return record
    }

    /// Replaces the credential's secret: the old one stops working in the same step. The
    /// expiry is kept, or set `expiresIn` from now when given. With `revision`, only if the
    /// credential is still at it.
    public func rotate(id: String, expiresIn: Duration?, revision: Int? = nil, now: Date = Date()) async throws -> (AdminSecret, AdminRecord) {
        let secret = AdminSecret.generate()
        let expiry = expiresIn.map { KeyRegistry.timestamp(now.addingTimeInterval($0.inSeconds)) } ?? "-"
        // The new index first (it grants nothing until the record names its hash), then the
        // switch, then the old index goes.
        _ = try await redis.send(.set(RegistryKeys.adminToken(hash: secret.hash), id))
        let reply = try await redis.run(
            RegistryScripts.rotateAdmin, keys: [RegistryKeys.admin(id)],
            arguments: [secret.hash, secret.start, expiry, KeyRegistry.timestamp(now), revision.map(String.init) ?? ""]
        )
        guard let parts = reply.array, let verdict = parts.first?.string, verdict == "ok", parts.count == 2 else {
            _ = try await redis.send(.del([RegistryKeys.adminToken(hash: secret.hash)]))
            if reply.array?.first?.string == "stale" {
                throw KeyRegistryError(.revisionChanged, RevisionPrecondition.staleMessage("admin \(id)", expected: revision ?? 0))
            }
            if reply.array?.first?.string == "inactive" {
                throw KeyRegistryError(.adminNotActive, "admin \(id) is revoked or expired; create a new credential")
            }
            throw KeyRegistryError(.adminNotFound, "no admin \(id)")
        }
        if let old = parts[1].string, old != secret.hash {
            _ = try await redis.send(.del([RegistryKeys.adminToken(hash: old)]))
        }
        guard let record = try await record(id: id) else { throw KeyRegistryError(.adminNotFound, "no admin \(id)") }
        return (secret, record)
    }

    static func fields(of record: AdminRecord) -> [String] {
        [
            "name", record.name, "role", record.role.rawValue, "status", record.storedStatus.rawValue,
            "created_at", KeyRegistry.timestamp(record.createdAt), "expires_at", record.expiresAt.map(KeyRegistry.timestamp) ?? "",
            "token_hash", record.tokenHash, "start", record.start, "created_by", record.createdBy, "rev", String(record.revision),
        ]
    }

    static func record(id: String, from reply: RedisValue) -> AdminRecord? {
        let fields = KeyRegistry.hashFields(reply)
        guard let name = fields["name"], let role = fields["role"].flatMap(AdminRole.init(rawValue:)),
            let status = fields["status"].flatMap(AdminRecord.Status.init(rawValue:)), let hash = fields["token_hash"]
        else { return nil }
        return AdminRecord(
            id: id, name: name, role: role, storedStatus: status,
            createdAt: KeyRegistry.date(fields["created_at"]) ?? Date(timeIntervalSince1970: 0),
            expiresAt: KeyRegistry.date(fields["expires_at"]),
            start: fields["start"] ?? "", tokenHash: hash, createdBy: fields["created_by"] ?? "",
            revision: fields["rev"].flatMap { Int($0) } ?? 0
        )
    }
}
