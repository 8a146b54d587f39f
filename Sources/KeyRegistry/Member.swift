import Foundation

/// A person of a partner's (not of the operator's): signs in to the portal with a code sent to
/// their email, and acts on their partner's keys as their ``MemberRole`` allows.
public struct Member: Sendable, Hashable {
    /// `mbr_` and 16 hex characters; the actor id of everything they do in the audit trail.
    public let id: String
    public let partnerID: String
    /// Lowercase; one member per address across all partners (the sign-in names no partner).
    public let email: String
    public var name: String
    public var role: MemberRole
    public let createdAt: Date
    /// Who invited them: an admin credential's id (`adm_...`, `root`) or a member's.
    public let createdBy: String
    /// Counts the changes made to the record: what `If-Match` compares.
    public var revision = 1

    public init(id: String, partnerID: String, email: String, name: String, role: MemberRole, createdAt: Date, createdBy: String) {
        self.id = id
        self.partnerID = partnerID
        self.email = email
        self.name = name
        self.role = role
        self.createdAt = createdAt
        self.createdBy = createdBy
    }

    /// Whether `text` is a member id as the registry issues them: `mbr_` and 16 lowercase hex.
    public static func isID(_ text: some StringProtocol) -> Bool {
        text.hasPrefix("mbr_") && text.utf8.count == 20 && text.utf8.dropFirst(4).allSatisfy { ($0 >= 48 && $0 <= 57) || ($0 >= 97 && $0 <= 102) }
    }
}
