import Foundation

/// The body of `POST /v1/admins`: a personal credential for one person.
public struct NewAdmin: Codable, Sendable, Hashable {
    /// The id to create the credential under (`adm_` and 16 hex), as a state file names it;
    /// nil to have one issued. An id already taken is `409 CONFLICT`.
    public let adminID: String?
    /// Who it belongs to (`asha`): recorded as the actor of everything it does.
    public let name: String
    /// `owner`, `operator`, `support`, `auditor` or `verifier`.
    public let role: String
    /// A duration in ``GatewayDuration``'s grammar, e.g. `90d`; unset: it never expires.
    public let expiresIn: String?
    /// When it expires, instead of `expiresIn`: a time in the future.
    public let expiresAt: Date?

    public init(adminID: String? = nil, name: String, role: String, expiresIn: String? = nil, expiresAt: Date? = nil) {
        self.adminID = adminID
        self.name = name
        self.role = role
        self.expiresIn = expiresIn
        self.expiresAt = expiresAt
    }

    enum CodingKeys: String, CodingKey {
        case name, role
        case adminID = "admin_id"
        case expiresIn = "expires_in"
        case expiresAt = "expires_at"
    }
}
