import Foundation

/// A key as the admin API shows it after creation (list, get, find): everything but the key.
public struct KeyInfo: Codable, Sendable, Hashable {
    public let keyID: String
    public let partnerID: String
    /// The key's non-secret beginning (`pgk_live_7Qx4`): the fixed prefix and the first
    /// characters of the secret, as Unkey's `start`, so a person can tell keys apart.
    public let start: String
    public let name: String?
    public let meta: [String: String]
    /// `active`, `expiring` (rotated, in its grace period), `revoked` or `expired`.
    public let status: String
    public let scopes: [String]
    public let createdAt: Date
    public let expiresAt: Date?
    public let lastUsedAt: Date?
    /// The networks the key may be used from, within its partner's; empty for anywhere.
    public let allowedCIDRs: [String]
    /// The calls the key may make per period; nil for none.
    public let quota: QuotaSetting?
    /// Counts the changes made to it: every change adds one. Send it back in `If-Match`
    /// (`"3"`) to change it only if nothing else has meanwhile.
    public let revision: Int

    public init(
        keyID: String, partnerID: String, start: String, name: String?, meta: [String: String], status: String, scopes: [String],
        createdAt: Date, expiresAt: Date?, lastUsedAt: Date?, allowedCIDRs: [String] = [], quota: QuotaSetting? = nil,
        revision: Int = 0
    ) {
        self.keyID = keyID
        self.partnerID = partnerID
        self.start = start
        self.name = name
        self.meta = meta
        self.status = status
        self.scopes = scopes
        self.createdAt = createdAt
        self.expiresAt = expiresAt
        self.lastUsedAt = lastUsedAt
        self.allowedCIDRs = allowedCIDRs
        self.quota = quota
        self.revision = revision
    }

    enum CodingKeys: String, CodingKey {
        case start, name, meta, status, scopes, quota, revision
        case allowedCIDRs = "allowed_cidrs"
        case keyID = "key_id"
        case partnerID = "partner_id"
        case createdAt = "created_at"
        case expiresAt = "expires_at"
        case lastUsedAt = "last_used_at"
    }

    // Written out so absent values are `null`, never missing keys.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(keyID, forKey: .keyID)
        try container.encode(partnerID, forKey: .partnerID)
        try container.encode(start, forKey: .start)
        try container.encode(name, forKey: .name)
        try container.encode(meta, forKey: .meta)
        try container.encode(status, forKey: .status)
        try container.encode(scopes, forKey: .scopes)
        try container.encode(createdAt, forKey: .createdAt)
        try container.encode(expiresAt, forKey: .expiresAt)
        try container.encode(lastUsedAt, forKey: .lastUsedAt)
        try container.encode(allowedCIDRs, forKey: .allowedCIDRs)
        try container.encode(quota, forKey: .quota)
        try container.encode(revision, forKey: .revision)
    }

    // A gateway from before allowlists and quotas sends neither, nor one from before revisions.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        keyID = try container.decode(String.self, forKey: .keyID)
        partnerID = try container.decode(String.self, forKey: .partnerID)
        start = try container.decode(String.self, forKey: .start)
        name = try container.decodeIfPresent(String.self, forKey: .name)
        meta = try container.decode([String: String].self, forKey: .meta)
        status = try container.decode(String.self, forKey: .status)
        scopes = try container.decode([String].self, forKey: .scopes)
        createdAt = try container.decode(Date.self, forKey: .createdAt)
        expiresAt = try container.decodeIfPresent(Date.self, forKey: .expiresAt)
        lastUsedAt = try container.decodeIfPresent(Date.self, forKey: .lastUsedAt)
        allowedCIDRs = try container.decodeIfPresent([String].self, forKey: .allowedCIDRs) ?? []
        quota = try container.decodeIfPresent(QuotaSetting.self, forKey: .quota)
        revision = try container.decodeIfPresent(Int.self, forKey: .revision) ?? 0
    }
}
