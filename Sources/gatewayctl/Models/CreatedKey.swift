/// The answer to `keys create`: the only time (with rotation) the key text is seen.
struct CreatedKey: Codable, Equatable {
    let keyID: String
    let partnerID: String
    let key: String
    let scopes: [String]
    let createdAt: String
    let expiresAt: String?

    enum CodingKeys: String, CodingKey {
        case keyID = "key_id"
        case partnerID = "partner_id"
        case key, scopes
        case createdAt = "created_at"
        case expiresAt = "expires_at"
    }

    // Written out so a key without expiry prints `"expires_at": null`.
    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(keyID, forKey: .keyID)
        try container.encode(partnerID, forKey: .partnerID)
        try container.encode(key, forKey: .key)
        try container.encode(scopes, forKey: .scopes)
        try container.encode(createdAt, forKey: .createdAt)
        try container.encode(expiresAt, forKey: .expiresAt)
    }
}
