import Foundation

/// The answer to a portal sign-in (`POST /portal/v1/session`): who signed in and when the
/// session ends at the latest. The session itself is in the `pg_portal` cookie, never here.
public struct PortalSession: Codable, Sendable, Hashable {
    public let memberID: String
    public let partnerID: String
    public let role: String
    public let expiresAt: Date

    public init(memberID: String, partnerID: String, role: String, expiresAt: Date) {
        self.memberID = memberID
        self.partnerID = partnerID
        self.role = role
        self.expiresAt = expiresAt
    }

    enum CodingKeys: String, CodingKey {
        case role
        case memberID = "member_id"
        case partnerID = "partner_id"
        case expiresAt = "expires_at"
    }
}
