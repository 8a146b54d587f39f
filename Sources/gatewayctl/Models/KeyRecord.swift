/// A key as `keys list` shows it: everything but the key itself, which the gateway does not
/// keep.
struct KeyRecord: Codable, Equatable {
    let keyID: String
    /// `active`, `expiring` (rotated, in its grace period), `revoked` or `expired`.
    let status: String
    let scopes: [String]
    let createdAt: String
    let expiresAt: String?
    let lastUsedAt: String?

    enum CodingKeys: String, CodingKey {
        case keyID = "key_id"
        case status, scopes
        case createdAt = "created_at"
        case expiresAt = "expires_at"
        case lastUsedAt = "last_used_at"
    }

    // Written out so "never expires" and "never used" stay `null` in --json output
    // instead of the keys disappearing.
    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(keyID, forKey: .keyID)
        try container.encode(status, forKey: .status)
        try container.encode(scopes, forKey: .scopes)
        try container.encode(createdAt, forKey: .createdAt)
        try container.encode(expiresAt, forKey: .expiresAt)
        try container.encode(lastUsedAt, forKey: .lastUsedAt)
    }
}
