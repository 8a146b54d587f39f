/// A partner's member as the admin API and the portal show them
/// (`POST /v1/partners/{partner_id}/members` and every answer about a member).
public struct MemberInfo: Codable, Sendable, Hashable {
    public let memberID: String
    public let partnerID: String
    /// Where sign-in codes go; lowercase.
    public let email: String
    public let name: String
    /// `partner_admin`, `developer` or `viewer`.
    public let role: String

    public init(memberID: String, partnerID: String, email: String, name: String, role: String) {
        self.memberID = memberID
        self.partnerID = partnerID
        self.email = email
        self.name = name
        self.role = role
    }

    enum CodingKeys: String, CodingKey {
        case email, name, role
        case memberID = "member_id"
        case partnerID = "partner_id"
    }
}
