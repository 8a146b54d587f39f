/// `GET /portal/v1/me`: the signed-in member, their partner (with what the operator granted it,
/// the bounds of the member's changes), and what the member's role lets them do, so the
/// portal's pages offer only that (the gateway enforces it either way).
public struct PortalMe: Codable, Sendable, Hashable {
    public let member: MemberInfo
    public let partner: PartnerInfo
    /// The role's permissions (`keys.read`, `keys.write`, ...), sorted.
    public let permissions: [String]

    public init(member: MemberInfo, partner: PartnerInfo, permissions: [String]) {
        self.member = member
        self.partner = partner
        self.permissions = permissions
    }
}
