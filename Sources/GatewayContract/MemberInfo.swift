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
    /// Counts the changes made to the member: send it back in `If-Match` (`"3"`) to change
    /// or remove them only if nothing else has meanwhile.
    public let revision: Int

    public init(memberID: String, partnerID: String, email: String, name: String, role: String, revision: Int = 0) {
        self.memberID = memberID
        self.partnerID = partnerID
        self.email = email
        self.name = name
        self.role = role
        self.revision = revision
    }

    enum CodingKeys: String, CodingKey {
        case email, name, role, revision
        case memberID = "member_id"
        case partnerID = "partner_id"
    }

    // A gateway from before member revisions sends none.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        memberID = try container.decode(String.self, forKey: .memberID)
        partnerID = try container.decode(String.self, forKey: .partnerID)
        email = try container.decode(String.self, forKey: .email)
        name = try container.decode(String.self, forKey: .name)
        role = try container.decode(String.self, forKey: .role)
        revision = try container.decodeIfPresent(Int.self, forKey: .revision) ?? 0
    }
}
