/// The body of `PATCH /v1/partners/{partner_id}/members/{member_id}` (and the portal's `PATCH
/// /portal/v1/members/{member_id}`): only the fields present change. The email stays: a new
/// address is a new member.
public struct MemberUpdate: Codable, Sendable, Hashable {
    public let name: String?
    public let role: String?

    public init(name: String? = nil, role: String? = nil) {
        self.name = name
        self.role = role
    }

    /// Nothing to change: refused rather than audited for nothing.
    public var isEmpty: Bool { name == nil && role == nil }
}
