/// The body of `POST /v1/partners/{partner_id}/members` (and the portal's `POST
/// /portal/v1/members`): invites a person to a partner.
public struct NewMember: Codable, Sendable, Hashable {
    /// Where the person's sign-in codes go; one member per address across all partners.
    public let email: String
    public let name: String
    /// `partner_admin`, `developer` or `viewer`.
    public let role: String

    public init(email: String, name: String, role: String) {
        self.email = email
        self.name = name
        self.role = role
    }
}
