import Foundation

/// The response to creating a key: the only time (with rotation) the key text is seen.
public struct CreatedKey: Codable, Sendable, Hashable {
    public let keyID: String
    public let partnerID: String
    /// The key itself; shown once, never stored.
    public let key: String
    /// The key's non-secret beginning, shown with it from now on (see ``KeyInfo/start``).
    public let start: String
    public let name: String?
    public let meta: [String: String]
    public let scopes: [String]
    public let createdAt: Date
    public let expiresAt: Date?

    public init(keyID: String, partnerID: String, key: String, start: String, name: String?, meta: [String: String], scopes: [String], createdAt: Date, expiresAt: Date?) {
        self.keyID = keyID
        self.partnerID = partnerID
        self.key = key
        self.start = start
        self.name = name
        self.meta = meta
        self.scopes = scopes
        self.createdAt = createdAt
        self.expiresAt = expiresAt
    }

    enum CodingKeys: String, CodingKey {
        case key, start, name, meta, scopes
        case keyID = "key_id"
        case partnerID = "partner_id"
        case createdAt = "created_at"
        case expiresAt = "expires_at"
    }

    // Written out so "no name" and "never expires" are `null` rather than missing keys:
    // clients can rely on every documented field being present.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(keyID, forKey: .keyID)
        try container.encode(partnerID, forKey: .partnerID)
        try container.encode(key, forKey: .key)
        try container.encode(start, forKey: .start)
        try container.encode(name, forKey: .name)
        try container.encode(meta, forKey: .meta)
        try container.encode(scopes, forKey: .scopes)
        try container.encode(createdAt, forKey: .createdAt)
        try container.encode(expiresAt, forKey: .expiresAt)
    }
}
