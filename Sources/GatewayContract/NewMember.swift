/// The body of `POST /v1/partners/{partner_id}/members` (and the portal's `POST
/// /portal/v1/members`, which takes no `member_id`): invites a person to a partner.
public struct NewMember: Codable, Sendable, Hashable {
    /// The id to create the member under (`mbr_` and 16 hex), as a state file names it; nil
    /// to have one issued. An id already taken is `409 CONFLICT`.
    public let memberID: String?
    /// Where the person's sign-in codes go; one member per address across all partners.
    public let email: String
    public let name: String
    /// `partner_admin`, `developer` or `viewer`.
    public let role: String

    public init(memberID: String? = nil, email: String, name: String, role: String) {
        self.memberID = memberID
        self.email = email
        self.name = name
        self.role = role
    }

    enum CodingKeys: String, CodingKey {
        case email, name, role
        case memberID = "member_id"
    }
}
