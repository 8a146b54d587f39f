/// The Redis keyspace of partners, keys and the audit log.
///
/// Every key carries a Cluster hash tag (`{...}`) for the entity it belongs to, so one
/// entity's keys share a slot.
enum RegistryKeys {
    /// Hash: name, status, scopes, rate, burst, created_at, allowed_cidrs, quota (`100/day`).
    static func partner(_ id: String) -> String { "pg:partner:{\(id)}" }
    /// Sorted set of partner ids by creation time.
    static let partners = "pg:partners"
    /// Set of the partner's key ids.
    static func partnerKeys(_ id: String) -> String { "pg:partner:{\(id)}:keys" }
    /// Hash: key_id, partner_id, scopes, status, created_at, expires_at, last_used_at, prefix,
    /// name, meta (a JSON object), allowed_cidrs (space-separated), quota (`100000/month`).
    static func apiKey(hash: String) -> String { "pg:apikey:{\(hash)}" }
    /// String: the key's hash, for admin operations by key id.
    static func keyID(_ id: String) -> String { "pg:keyid:{\(id)}" }
    /// Hash: name, role, status, created_at, expires_at, token_hash, start, created_by.
    static func admin(_ id: String) -> String { "pg:admin:{\(id)}" }
    /// String: the admin id whose current secret has this SHA-256.
    static func adminToken(hash: String) -> String { "pg:admintoken:{\(hash)}" }
    /// Sorted set of admin ids by creation time.
    static let admins = "pg:admins"
    /// Stream of admin actions, hash-chained (``AuditLog``).
    static let audit = "pg:audit"
    /// Stream of refused admin calls (`access.refused`), a chain of its own (``AuditLog``).
    static let auditRefusals = "pg:audit:refused"
    /// Hash: entries, seq, hash: what the cap trimmed from the start of `stream`. Its tag is
    /// the stream's whole name, the part a key without a tag is slotted by: one slot, so the
    /// append script trims and records in one step on a cluster too. Under `pg:`, as the ACL
    /// user's key pattern asks (docs/redis.md).
    static func auditTrimmed(_ stream: String) -> String { "pg:trimmed:{\(stream)}" }
    /// Sorted set of the partner's member ids by creation time.
    static func partnerMembers(_ id: String) -> String { "pg:partner:{\(id)}:members" }
    /// Sorted set of the partner's own audit entries (`actions:<id>`, `refusals:<id>`) by time
    /// (ms): what the portal shows the partner (``AuditLog/partnerEntries(_:limit:before:)``).
    static func partnerAudit(_ id: String) -> String { "pg:partner:{\(id)}:audit" }
    /// String: held while a member creates one of the partner's keys, so two at once cannot
    /// both pass `max_keys`.
    static func partnerKeyLock(_ id: String) -> String { "pg:partner:{\(id)}:keylock" }
    /// Hash: partner_id, email, name, role, created_at, created_by, rev (the revision).
    static func member(_ id: String) -> String { "pg:member:{\(id)}" }
    /// Set: the hashes of the member's portal sessions (lives as long as the newest may).
    static func memberSessions(_ id: String) -> String { "pg:member:{\(id)}:sessions" }
    /// Hash: created_at, expires_at (ms). Expires when unused for `portal.session_idle`.
    static func memberSession(_ id: String, hash: String) -> String { "pg:member:{\(id)}:session:\(hash)" }
    /// String: the id of the member with this email (its SHA-256: an address may hold `{`).
    static func memberEmail(hash: String) -> String { "pg:memberemail:{\(hash)}" }
    /// Pub/sub channel of cache invalidations: `key <hash>`, `partner <id>`, `user <id>`, ...
    static let invalidationChannel = "pg:invalidate"
}
