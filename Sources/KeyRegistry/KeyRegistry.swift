import Foundation
import GatewayContract
import GatewayPrimitives
import Logging
import RedisClient

/// Partners and their API keys, stored in Redis.
///
/// Every write that changes whether a key verifies (rotate, revoke, partner disable) publishes
/// an invalidation on `pg:invalidate` in the same atomic step, so every gateway instance's
/// ``KeyVerifier`` cache drops it at once.
public struct KeyRegistry: Sendable {
    public static var invalidationChannel: String { RegistryKeys.invalidationChannel }
    let redis: RedisConnectionPool

    public init(redis: RedisConnectionPool) {
        self.redis = redis
    }

    // MARK: Partners

    /// Creates a partner under `id` (`ptr_` and 16 hex, as a state file names it) or an id
    /// issued here; an id taken already is ``KeyRegistryError/Code/alreadyExists`` and nothing
    /// is written.
    package func createPartner(
        id: String? = nil, name: String, scopes: [String]?, rate: Double?, burst: Int?,
        allowedNetworks: NetworkAllowlist = NetworkAllowlist(), quota: Quota? = nil, status: Partner.Status = .active,
        maxKeys: Int? = nil, now: Date = Date()
    ) async throws -> Partner {
        var partner = Partner(
            id: id ?? "ptr_" + RandomHex.string(byteCount: 8),
            name: name,
            status: status,
            scopes: scopes ?? Partner.defaultScopes,
            rate: rate ?? Partner.defaultRate,
            burst: burst ?? Partner.defaultBurst,
            createdAt: now
        )
        partner.allowedNetworks = allowedNetworks
        partner.quota = quota
        partner.maxKeys = maxKeys ?? Partner.defaultMaxKeys
        // Two slots (Redis Cluster refuses a transaction across them): the record first, so
        // the list never names a partner that does not exist; a failure in between leaves an
        // unlisted partner whose id nobody was told.
        let created = try await redis.run(RegistryScripts.createPartner, keys: [RegistryKeys.partner(partner.id)], arguments: Self.fields(of: partner))
        let listing = RedisCommand.zadd(RegistryKeys.partners, score: String(format: "%.3f", now.timeIntervalSince1970), member: partner.id, onlyIfAbsent: true)
        guard created.int == 1 else {
            // A create cut off before it listed its partner left the record unlisted: listed
            // now (where it is listed already, nothing moves), a plan finds it and converges.
            _ = try await redis.send(listing)
            throw KeyRegistryError(.alreadyExists, "partner \(partner.id) exists already")
        }
        _ = try await redis.send(listing)
        return partner
    }

    public func partner(_ id: String) async throws -> Partner? {
        let reply = try await redis.send(.hgetall(RegistryKeys.partner(id)))
        return Self.partner(id: id, from: reply)
    }

    /// Every partner, oldest first.
    public func partners() async throws -> [Partner] {
        try await partners(after: nil, limit: nil).partners
    }

    /// Up to `limit` partners (all when nil), oldest first, starting after the partner
    /// `after`; `more` tells whether any follow. Partners are never deleted, so their order
    /// (creation time, then id) is stable from page to page.
    public func partners(after: String?, limit: Int?) async throws -> (partners: [Partner], more: Bool) {
        var start = 0
        if let after {
            guard let rank = try await redis.send(.zrank(RegistryKeys.partners, after)).int else {
                throw KeyRegistryError(.unknownCursor, "no partner \(after) to continue after")
            }
            start = Int(rank) + 1
        }
        let stop = limit.map { start + $0 } ?? -1
        var ids = try await redis.send(.zrange(RegistryKeys.partners, start, stop)).array?.compactMap(\.string) ?? []
        let more = limit.map { ids.count > $0 } ?? false
        if more { ids.removeLast() }
        guard !ids.isEmpty else { return ([], false) }
        let replies = try await redis.pipeline(ids.map { .hgetall(RegistryKeys.partner($0)) })
        return (zip(ids, replies).compactMap { Self.partner(id: $0, from: $1) }, more)
    }

    /// Changes the given fields of a partner (nil leaves a field as it is; a `quota` of
    /// `.some(nil)` removes the quota) in one step, and has every instance drop its cached
    /// copy. With `revision`, only if the partner is still at it
    /// (``KeyRegistryError/Code/revisionChanged`` otherwise, and nothing changes).
    package func updatePartner(
        _ id: String, name: String? = nil, scopes: [String]? = nil, rate: Double? = nil, burst: Int? = nil,
        allowedNetworks: NetworkAllowlist? = nil, quota: Quota?? = nil, status: Partner.Status? = nil, maxKeys: Int? = nil,
        revision: Int? = nil
    ) async throws -> Partner {
        var fields: [String] = []
        if let maxKeys { fields += ["max_keys", String(maxKeys)] }
        if let name { fields += ["name", name] }
        if let scopes { fields += ["scopes", scopes.joined(separator: " ")] }
        if let rate { fields += ["rate", String(rate)] }
        if let burst { fields += ["burst", String(burst)] }
        if let allowedNetworks { fields += ["allowed_cidrs", allowedNetworks.stored] }
        if let quota { fields += ["quota", quota?.stored ?? ""] }
        if let status { fields += ["status", status.rawValue] }
        guard !fields.isEmpty else {
            guard let partner = try await partner(id) else { throw KeyRegistryError(.partnerNotFound, "no partner \(id)") }
            return partner
        }
        let reply = try await redis.run(
            RegistryScripts.updatePartner, keys: [RegistryKeys.partner(id)], arguments: [id, revision.map(String.init) ?? ""] + fields
        )
        if reply.int == -1, let revision { throw KeyRegistryError(.revisionChanged, RevisionPrecondition.staleMessage("partner \(id)", expected: revision)) }
        guard reply.int == 1, let partner = try await partner(id) else { throw KeyRegistryError(.partnerNotFound, "no partner \(id)") }
        return partner
    }

    /// Disables or enables a partner: ``updatePartner(_:name:scopes:rate:burst:allowedNetworks:quota:status:maxKeys:revision:)``
    /// with its status alone.
    public func setPartnerStatus(_ id: String, _ status: Partner.Status, revision: Int? = nil) async throws -> Partner {
        try await updatePartner(id, status: status, revision: revision)
    }

    // MARK: Keys

    /// Creates a key for the partner. The returned ``APIKey`` is the only copy of the key.
    /// A key holds its partner's scopes or fewer: asking for any other is
    /// ``KeyRegistryError/Code/scopesNotHeld``, naming them, and nothing is written. Under `id`
    /// (`key_` and 16 hex, as a state file names it) or an id issued here; an id taken already
    /// is ``KeyRegistryError/Code/alreadyExists``. It expires `expiresIn` from now or at
    /// `expiresAt`, whichever is given. A member (`by: .member`) creates none past the
    /// partner's `max_keys` live keys (``KeyRegistryError/Code/keyLimitReached``).
    package func createKey(
        id: String? = nil, partnerID: String, scopes: [String]?, expiresIn: Duration?, expiresAt: Date? = nil, name: String? = nil,
        meta: [String: String] = [:], allowedNetworks: NetworkAllowlist = NetworkAllowlist(), quota: Quota? = nil,
        by source: ChangeSource = .admin, now: Date = Date()
    ) async throws -> (APIKey, KeyRecord) {
        guard let partner = try await partner(partnerID) else {
            throw KeyRegistryError(.partnerNotFound, "no partner \(partnerID)")
        }
        if let scopes { try Self.requireHeld(scopes, by: partner) }
        let key = APIKey.generate()
        let record = KeyRecord(
            id: id ?? "key_" + RandomHex.string(byteCount: 8),
            partnerID: partner.id,
            scopes: scopes ?? partner.scopes,
            storedStatus: .active,
            createdAt: now,
            expiresAt: expiresAt ?? expiresIn.map { now.addingTimeInterval($0.inSeconds) },
            lastUsedAt: nil,
            displayPrefix: key.displayPrefix,
            name: name,
            meta: meta,
            allowedNetworks: allowedNetworks,
            quota: quota,
            hash: key.hash
        )
        guard source == .member else {
            try await store(record)
            return (key, record)
        }
        return try await withKeysCounted(of: partnerID, now: now) { live in
            guard live < partner.maxKeys else {
                throw KeyRegistryError(
                    .keyLimitReached, "partner \(partnerID) holds \(live) live keys, its max_keys: revoke one, or ask the operator for more"
                )
            }
            try await store(record)
            return (key, record)
        }
    }

    /// Runs `body` with the partner's live keys counted, as a step of its own per partner: two
    /// members adding a key at once cannot both take the last place.
    private func withKeysCounted<T>(of partnerID: String, now: Date, _ body: (Int) async throws -> T) async throws -> T {
        let lock = RegistryKeys.partnerKeyLock(partnerID)
        let holder = RandomHex.string(byteCount: 8)
        var held = false
        for _ in 0..<Self.lockAttempts {
            held = try await redis.send(.set(lock, holder, expiry: .seconds(10), onlyIfAbsent: true)).string == "OK"
            if held { break }
            try await Task.sleep(for: .milliseconds(25))
        }
        guard held else { throw KeyRegistryError(.busy, "another key of partner \(partnerID) is being created; try again") }
        do {
            let live = try await keys(partnerID: partnerID).filter { [.active, .expiring].contains($0.status(at: now)) }.count
            let result = try await body(live)
            _ = try? await redis.run(RegistryScripts.releaseLock, keys: [lock], arguments: [holder])
            return result
        } catch {
            _ = try? await redis.run(RegistryScripts.releaseLock, keys: [lock], arguments: [holder])
            throw error
        }
    }

    /// How many times a member's key creation waits its turn (25 ms each) before `busy`.
    static let lockAttempts = 40

    /// Writes a new key's three records, one hash tag each: first its id, claimed only if no
    /// key has it (``KeyRegistryError/Code/alreadyExists`` otherwise, with nothing written),
    /// then the partner's list, then the key's own record: until that exists the key verifies
    /// nowhere, and before that a failure leaves only index entries naming nothing
    /// (``key(id:)`` answers nil). The key's text reaches its caller only after all three
    /// succeeded, so even a record left behind by a failure grants nothing.
    private func store(_ record: KeyRecord) async throws {
        try await claim(record)
        _ = try await redis.send(.sadd(RegistryKeys.partnerKeys(record.partnerID), [record.id]))
        _ = try await redis.send(.hset(RegistryKeys.apiKey(hash: record.hash), Self.fields(of: record)))
        // A create that took the claim over meanwhile (below) has the id: this key's record
        // goes again, its text never handed out.
        guard try await redis.send(.get(RegistryKeys.keyID(record.id))).string == record.hash else {
            _ = try await redis.send(.del([RegistryKeys.apiKey(hash: record.hash)]))
            throw KeyRegistryError(.alreadyExists, "key \(record.id) exists already")
        }
    }

    /// Claims the key's id. A claim naming no key record was left by a create cut off before
    /// it wrote one (Redis failed in between): it is taken over, so applying a state file
    /// that names the id again converges.
    private func claim(_ record: KeyRecord) async throws {
        let index = RegistryKeys.keyID(record.id)
        guard try await redis.send(.set(index, record.hash, onlyIfAbsent: true)).isNull else { return }
        let claimed = try await redis.send(.get(index)).string ?? ""
        guard try await key(hash: claimed) == nil,
              try await redis.run(RegistryScripts.takeOverKeyID, keys: [index], arguments: [claimed, record.hash]).int == 1
        else { throw KeyRegistryError(.alreadyExists, "key \(record.id) exists already") }
    }

    /// Removes a key that was stored but never handed out (a rotation that could not end the
    /// old key), in the reverse order of ``store(_:)``.
    private func discard(_ record: KeyRecord) async throws {
        _ = try await redis.send(.del([RegistryKeys.apiKey(hash: record.hash)]))
        _ = try await redis.send(.srem(RegistryKeys.partnerKeys(record.partnerID), [record.id]))
        _ = try await redis.send(.del([RegistryKeys.keyID(record.id)]))
    }

    /// The key with this id, or nil.
    public func key(id: String) async throws -> KeyRecord? {
        guard let hash = try await redis.send(.get(RegistryKeys.keyID(id))).string else { return nil }
        return try await key(hash: hash)
    }

    /// The key stored under this hash, or nil: what verification looks up.
    public func key(hash: String) async throws -> KeyRecord? {
        let reply = try await redis.send(.hgetall(RegistryKeys.apiKey(hash: hash)))
        return Self.keyRecord(hash: hash, from: reply)
    }

    /// Every key of the partner, oldest first (ties by id, so the order is stable for paging).
    /// Never the keys themselves: they are not stored.
    public func keys(partnerID: String) async throws -> [KeyRecord] {
        guard try await partner(partnerID) != nil else { throw KeyRegistryError(.partnerNotFound, "no partner \(partnerID)") }
        let ids = try await redis.send(.smembers(RegistryKeys.partnerKeys(partnerID))).array?.compactMap(\.string) ?? []
        guard !ids.isEmpty else { return [] }
        let hashes = try await redis.pipeline(ids.map { .get(RegistryKeys.keyID($0)) }).compactMap(\.string)
        let replies = try await redis.pipeline(hashes.map { .hgetall(RegistryKeys.apiKey(hash: $0)) })
        // An id a cut-off create left in this list may name another partner's key since.
        return zip(hashes, replies).compactMap { Self.keyRecord(hash: $0, from: $1) }.filter { $0.partnerID == partnerID }
            .sorted { ($0.createdAt, $0.id) < ($1.createdAt, $1.id) }
    }

    /// Replaces a key: a new key with the same partner and scopes, and the old one kept valid
    /// for `grace` (never past its own expiry; zero ends it at once). The new key keeps only
    /// the old key's scopes the partner still holds: a rotation never carries a scope the
    /// partner has lost since, and is never refused for it (a leaked key must be rotatable).
    /// With `revision`, only if the old key is still at it. A member (`by: .member`) keeps an
    /// old key for a grace only while the partner holds at most `max_keys` live keys, so
    /// rotations cannot add keys past one over the limit; with no grace a rotation adds none
    /// and is never refused (``KeyRegistryError/Code/keyLimitReached``).
    public func rotateKey(
        id: String, grace: Duration, revision: Int? = nil, by source: ChangeSource = .admin, now: Date = Date()
    ) async throws -> (APIKey, KeyRecord, previous: KeyRecord) {
        guard source == .member, grace > .zero, let old = try await key(id: id) else {
            return try await rotated(id: id, grace: grace, revision: revision, now: now)
        }
        guard let partner = try await partner(old.partnerID) else { throw KeyRegistryError(.partnerNotFound, "no partner \(old.partnerID)") }
        return try await withKeysCounted(of: old.partnerID, now: now) { live in
            guard live <= partner.maxKeys else {
                throw KeyRegistryError(
                    .keyLimitReached,
                    "partner \(old.partnerID) holds \(live) live keys, past its max_keys: rotate with grace 0 (the old key ends at once), or revoke one"
                )
            }
            return try await rotated(id: id, grace: grace, revision: revision, now: now)
        }
    }

    private func rotated(id: String, grace: Duration, revision: Int?, now: Date) async throws -> (APIKey, KeyRecord, previous: KeyRecord) {
        guard let old = try await key(id: id) else { throw KeyRegistryError(.keyNotFound, "no key \(id)") }
        if let revision, revision != old.revision {
            throw KeyRegistryError(.revisionChanged, RevisionPrecondition.staleMessage("key \(id)", expected: revision))
        }
        guard old.status(at: now) == .active else {
            throw KeyRegistryError(.keyNotRotatable, "key \(id) is \(old.status(at: now).rawValue); only active keys can be rotated")
        }
        guard let partner = try await partner(old.partnerID) else {
            throw KeyRegistryError(.partnerNotFound, "no partner \(old.partnerID)")
        }
        let key = APIKey.generate()
        let record = KeyRecord(
            id: "key_" + RandomHex.string(byteCount: 8),
            partnerID: old.partnerID,
            scopes: old.scopes.filter(partner.scopes.contains),
            storedStatus: .active,
            createdAt: now,
            expiresAt: old.expiresAt,
            lastUsedAt: nil,
            displayPrefix: key.displayPrefix,
            name: old.name,
            meta: old.meta,
            allowedNetworks: old.allowedNetworks,
            quota: old.quota,
            hash: key.hash
        )
        var graceEnd = now.addingTimeInterval(grace.inSeconds)
        if let ownExpiry = old.expiresAt, ownExpiry < graceEnd { graceEnd = ownExpiry }
        // Two slots, two steps: the new key first (unknown to anyone until this returns),
        // then the old key's end, checked and published in its own slot. When the old key
        // changed meanwhile the new one is removed again. When Redis fails to answer, the
        // second step may still run late, so the new key stays: never handed out, it grants
        // nothing, and it keeps a late-ended old key's `rotated_to` pointing at a real key.
        try await store(record)
        let ended = try await redis.run(
            RegistryScripts.rotateKey,
            keys: [RegistryKeys.apiKey(hash: old.hash)],
            arguments: [Self.timestamp(graceEnd), record.id, RegistryKeys.invalidationChannel, Self.timestamp(now), old.hash, revision.map(String.init) ?? ""]
        ).int
        guard ended == 1 else {
            try await discard(record)
            if ended == -1, let revision { throw KeyRegistryError(.revisionChanged, RevisionPrecondition.staleMessage("key \(id)", expected: revision)) }
            throw KeyRegistryError(.keyNotRotatable, "key \(id) changed while rotating; try again")
        }
        var previous = old
        previous.storedStatus = .expiring
        previous.expiresAt = graceEnd
        previous.revision += 1
        return (key, record, previous)
    }

    /// Revokes a key at once, on every gateway instance. A key revoked before is refused with
    /// ``KeyRegistryError/Code/keyAlreadyRevoked`` and nothing is written. With `revision`, only
    /// if the key is still at it.
    public func revokeKey(id: String, revision: Int? = nil) async throws -> KeyRecord {
        guard var record = try await key(id: id) else { throw KeyRegistryError(.keyNotFound, "no key \(id)") }
        let reply = try await redis.run(
            RegistryScripts.revokeKey,
            keys: [RegistryKeys.apiKey(hash: record.hash)],
            arguments: [RegistryKeys.invalidationChannel, record.hash, revision.map(String.init) ?? ""]
        )
        switch reply.int {
        case 1: break
        case 2: throw KeyRegistryError(.keyAlreadyRevoked, "key \(id) is already revoked")
        case -1: throw KeyRegistryError(.revisionChanged, RevisionPrecondition.staleMessage("key \(id)", expected: revision ?? 0))
        default: throw KeyRegistryError(.keyNotFound, "no key \(id)")
        }
        record.storedStatus = .revoked
        record.revision += 1
        return record
    }

    /// Changes the given fields of a key (nil leaves a field as it is; a `quota` of `.some(nil)`
    /// removes the quota) and has every instance drop its cached copy, in one step. New scopes
    /// are its partner's or fewer, whoever asks; a member's allowlist and quota stay within
    /// the partner's (``Partner/requireWithinGrant(quota:allowlist:)``). With `revision`, only
    /// if the key is still at it.
    package func updateKey(
        id: String, name: String?, meta: [String: String]?, allowedNetworks: NetworkAllowlist?, quota: Quota??,
        scopes: [String]? = nil, by source: ChangeSource = .admin, revision: Int? = nil
    ) async throws -> KeyRecord {
        guard let record = try await key(id: id) else { throw KeyRegistryError(.keyNotFound, "no key \(id)") }
        if scopes != nil || source == .member {
            guard let partner = try await partner(record.partnerID) else { throw KeyRegistryError(.partnerNotFound, "no partner \(record.partnerID)") }
            if let scopes { try Self.requireHeld(scopes, by: partner) }
            if source == .member { try partner.requireWithinGrant(quota: quota ?? nil, allowlist: allowedNetworks) }
        }
        var fields: [String] = []
        if let scopes { fields += ["scopes", scopes.joined(separator: " ")] }
        if let name { fields += ["name", name] }
        if let meta { fields += ["meta", Self.encodeMeta(meta)] }
        if let allowedNetworks { fields += ["allowed_cidrs", allowedNetworks.stored] }
        if let quota { fields += ["quota", quota?.stored ?? ""] }
        guard !fields.isEmpty else { return record }
        let reply = try await redis.run(
            RegistryScripts.updateKey,
            keys: [RegistryKeys.apiKey(hash: record.hash)],
            arguments: [RegistryKeys.invalidationChannel, record.hash, revision.map(String.init) ?? ""] + fields
        )
        if reply.int == -1, let revision { throw KeyRegistryError(.revisionChanged, RevisionPrecondition.staleMessage("key \(id)", expected: revision)) }
        guard reply.int == 1, let updated = try await key(hash: record.hash) else { throw KeyRegistryError(.keyNotFound, "no key \(id)") }
        return updated
    }

    /// Records a successful use. Called at most once a minute per key per instance (see
    /// ``KeyVerifier``), so a busy key costs no Redis write per request.
    public func touch(hash: String, at now: Date) async throws {
        _ = try await redis.send(.hset(RegistryKeys.apiKey(hash: hash), ["last_used_at", Self.timestamp(now)]))
    }

    /// Throws ``KeyRegistryError/Code/scopesNotHeld`` naming every scope in `scopes` that
    /// `partner` lacks.
    static func requireHeld(_ scopes: [String], by partner: Partner) throws {
        var lacking: [String] = []
        for scope in scopes where !partner.scopes.contains(scope) && !lacking.contains(scope) {
            lacking.append(scope)
        }
        guard lacking.isEmpty else {
            throw KeyRegistryError(
                .scopesNotHeld,
                "scopes not held by partner \(partner.id): \(lacking.joined(separator: ", ")); a key holds its partner's scopes or fewer"
            )
        }
    }

    // MARK: Encoding

    static func fields(of partner: Partner) -> [String] {
        [
            "name", partner.name, "status", partner.status.rawValue, "scopes", partner.scopes.joined(separator: " "),
            "rate", String(partner.rate), "burst", String(partner.burst), "created_at", timestamp(partner.createdAt),
            "allowed_cidrs", partner.allowedNetworks.stored, "quota", partner.quota?.stored ?? "", "max_keys", String(partner.maxKeys),
            "rev", String(partner.revision),
        ]
    }

    static func fields(of record: KeyRecord) -> [String] {
        [
            "key_id", record.id, "partner_id", record.partnerID, "scopes", record.scopes.joined(separator: " "),
            "status", record.storedStatus.rawValue, "created_at", timestamp(record.createdAt),
            "expires_at", record.expiresAt.map(timestamp) ?? "", "last_used_at", record.lastUsedAt.map(timestamp) ?? "",
            "prefix", record.displayPrefix, "name", record.name ?? "", "meta", encodeMeta(record.meta),
            "allowed_cidrs", record.allowedNetworks.stored, "quota", record.quota?.stored ?? "", "rev", String(record.revision),
        ]
    }

    static func partner(id: String, from reply: RedisValue) -> Partner? {
        let fields = hashFields(reply)
        guard let name = fields["name"], let status = fields["status"].flatMap(Partner.Status.init(rawValue:)) else { return nil }
        var partner = Partner(
            id: id,
            name: name,
            status: status,
            scopes: fields["scopes"].map(splitScopes) ?? [],
            rate: fields["rate"].flatMap(Double.init) ?? Partner.defaultRate,
            burst: fields["burst"].flatMap { Int($0) } ?? Partner.defaultBurst,
            createdAt: date(fields["created_at"]) ?? Date(timeIntervalSince1970: 0)
        )
        partner.allowedNetworks = NetworkAllowlist(stored: fields["allowed_cidrs"] ?? "")
        partner.quota = fields["quota"].flatMap(Quota.init(stored:))
        // Partners from before `max_keys` have the default.
        partner.maxKeys = fields["max_keys"].flatMap { Int($0) } ?? Partner.defaultMaxKeys
        partner.revision = fields["rev"].flatMap { Int($0) } ?? 0
        return partner
    }

    static func keyRecord(hash: String, from reply: RedisValue) -> KeyRecord? {
        let fields = hashFields(reply)
        guard let id = fields["key_id"], let partnerID = fields["partner_id"],
              let status = fields["status"].flatMap(KeyRecord.Status.init(rawValue:)) else { return nil }
        return KeyRecord(
            id: id,
            partnerID: partnerID,
            scopes: fields["scopes"].map(splitScopes) ?? [],
            storedStatus: status,
            createdAt: date(fields["created_at"]) ?? Date(timeIntervalSince1970: 0),
            expiresAt: date(fields["expires_at"]),
            lastUsedAt: date(fields["last_used_at"]),
            displayPrefix: fields["prefix"] ?? "",
            name: fields["name"].flatMap { $0.isEmpty ? nil : $0 },
            meta: decodeMeta(fields["meta"]),
            allowedNetworks: NetworkAllowlist(stored: fields["allowed_cidrs"] ?? ""),
            quota: fields["quota"].flatMap(Quota.init(stored:)),
            hash: hash,
            revision: fields["rev"].flatMap { Int($0) } ?? 0
        )
    }

    /// Metadata is stored as one JSON object in the key's hash.
    static func encodeMeta(_ meta: [String: String]) -> String {
        guard !meta.isEmpty else { return "" }
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        return (try? encoder.encode(meta)).map { String(decoding: $0, as: UTF8.self) } ?? ""
    }

    static func decodeMeta(_ text: String?) -> [String: String] {
        guard let text, !text.isEmpty else { return [:] }
        return (try? JSONDecoder().decode([String: String].self, from: Data(text.utf8))) ?? [:]
    }

    static func hashFields(_ reply: RedisValue) -> [String: String] {
        guard let items = reply.array, items.count % 2 == 0 else { return [:] }
        var fields: [String: String] = [:]
        for index in stride(from: 0, to: items.count, by: 2) {
            if let name = items[index].string, let value = items[index + 1].string {
                fields[name] = value
            }
        }
        return fields
    }

    private static func splitScopes(_ text: String) -> [String] {
        text.split(separator: " ").map(String.init)
    }

    /// Times are stored as Unix seconds with millisecond precision.
    static func timestamp(_ date: Date) -> String {
        String(format: "%.3f", date.timeIntervalSince1970)
    }

    static func date(_ text: String?) -> Date? {
        guard let text, !text.isEmpty, let seconds = Double(text) else { return nil }
        return Date(timeIntervalSince1970: seconds)
    }
}
