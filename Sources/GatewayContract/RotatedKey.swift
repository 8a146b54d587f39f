import Foundation

/// The response to a rotation: the new key, and until when the old one keeps working.
public struct RotatedKey: Codable, Sendable, Hashable {
    public let keyID: String
    public let key: String
    public let start: String
    public let previousKeyID: String
    public let previousKeyExpiresAt: Date?

    public init(keyID: String, key: String, start: String, previousKeyID: String, previousKeyExpiresAt: Date?) {
        self.keyID = keyID
        self.key = key
        self.start = start
        self.previousKeyID = previousKeyID
        self.previousKeyExpiresAt = previousKeyExpiresAt
    }

    enum CodingKeys: String, CodingKey {
        case key, start
        case keyID = "key_id"
        case previousKeyID = "previous_key_id"
        case previousKeyExpiresAt = "previous_key_expires_at"
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(keyID, forKey: .keyID)
        try container.encode(key, forKey: .key)
        try container.encode(start, forKey: .start)
        try container.encode(previousKeyID, forKey: .previousKeyID)
        try container.encode(previousKeyExpiresAt, forKey: .previousKeyExpiresAt)
    }
}
