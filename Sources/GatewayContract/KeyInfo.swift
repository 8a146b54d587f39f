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

    public init(keyID: String, partnerID: String, start: String, name: String?, meta: [String: String], status: String, scopes: [String], createdAt: Date, expiresAt: Date?, lastUsedAt: Date?) {
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
    }

    enum CodingKeys: String, CodingKey {
        case start, name, meta, status, scopes
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
    }
}
