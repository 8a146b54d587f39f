import Foundation

/// An admin credential as every response but create and rotate shows it: never the token.
public struct AdminInfo: Codable, Sendable, Hashable {
    public let adminID: String
    public let name: String
    public let role: String
    /// `active`, `revoked` or `expired`.
    public let status: String
    /// The token's non-secret beginning (`pga_live_Q7x4`).
    public let start: String
    public let createdAt: Date
    public let expiresAt: Date?
    /// The credential that created it (`root` for the break-glass token).
    public let createdBy: String
    /// Counts the changes made to it: every change adds one. Send it back in `If-Match`
    /// (`"3"`) to change it only if nothing else has meanwhile.
    public let revision: Int

    public init(
        adminID: String, name: String, role: String, status: String, start: String, createdAt: Date, expiresAt: Date?, createdBy: String,
        revision: Int = 0
    ) {
        self.adminID = adminID
        self.name = name
        self.role = role
        self.status = status
        self.start = start
        self.createdAt = createdAt
        self.expiresAt = expiresAt
        self.createdBy = createdBy
        self.revision = revision
    }

    enum CodingKeys: String, CodingKey {
        case name, role, status, start, revision
        case adminID = "admin_id"
        case createdAt = "created_at"
        case expiresAt = "expires_at"
        case createdBy = "created_by"
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(adminID, forKey: .adminID)
        try container.encode(name, forKey: .name)
        try container.encode(role, forKey: .role)
        try container.encode(status, forKey: .status)
        try container.encode(start, forKey: .start)
        try container.encode(createdAt, forKey: .createdAt)
        try container.encode(expiresAt, forKey: .expiresAt)
        try container.encode(createdBy, forKey: .createdBy)
        try container.encode(revision, forKey: .revision)
    }

    // A gateway from before revisions sends none.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        adminID = try container.decode(String.self, forKey: .adminID)
        name = try container.decode(String.self, forKey: .name)
        role = try container.decode(String.self, forKey: .role)
        status = try container.decode(String.self, forKey: .status)
        start = try container.decode(String.self, forKey: .start)
        createdAt = try container.decode(Date.self, forKey: .createdAt)
        expiresAt = try container.decodeIfPresent(Date.self, forKey: .expiresAt)
        createdBy = try container.decode(String.self, forKey: .createdBy)
        revision = try container.decodeIfPresent(Int.self, forKey: .revision) ?? 0
    }
}
