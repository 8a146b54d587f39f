import Foundation

/// The response to creating or rotating an admin credential: the only time its token is seen.
public struct CreatedAdmin: Codable, Sendable, Hashable {
    public let adminID: String
    public let name: String
    public let role: String
    /// The credential itself (`pga_live_...`); shown once, never stored.
    public let token: String
    public let expiresAt: Date?

    public init(adminID: String, name: String, role: String, token: String, expiresAt: Date?) {
        self.adminID = adminID
        self.name = name
        self.role = role
        self.token = token
        self.expiresAt = expiresAt
    }

    enum CodingKeys: String, CodingKey {
        case name, role, token
        case adminID = "admin_id"
        case expiresAt = "expires_at"
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(adminID, forKey: .adminID)
        try container.encode(name, forKey: .name)
        try container.encode(role, forKey: .role)
        try container.encode(token, forKey: .token)
        try container.encode(expiresAt, forKey: .expiresAt)
    }
}
