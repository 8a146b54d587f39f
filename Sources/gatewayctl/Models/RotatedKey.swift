/// The answer to `keys rotate`: the new key, and until when the old one keeps working.
struct RotatedKey: Codable, Equatable {
    let keyID: String
    let key: String
    let previousKeyID: String
    let previousKeyExpiresAt: String?

    enum CodingKeys: String, CodingKey {
        case keyID = "key_id"
        case key
        case previousKeyID = "previous_key_id"
        case previousKeyExpiresAt = "previous_key_expires_at"
    }

    // Written out so an absent end of grace prints as `null` rather than vanishing.
    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(keyID, forKey: .keyID)
        try container.encode(key, forKey: .key)
        try container.encode(previousKeyID, forKey: .previousKeyID)
        try container.encode(previousKeyExpiresAt, forKey: .previousKeyExpiresAt)
    }
}
