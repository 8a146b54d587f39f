/// The body of `POST /v1/admins`: a personal credential for one person.
public struct NewAdmin: Codable, Sendable, Hashable {
    /// Who it belongs to (`asha`): recorded as the actor of everything it does.
    public let name: String
    /// `owner`, `operator`, `support`, `auditor` or `verifier`.
    public let role: String
    /// A duration in ``GatewayDuration``'s grammar, e.g. `90d`; unset: it never expires.
    public let expiresIn: String?

    public init(name: String, role: String, expiresIn: String? = nil) {
        self.name = name
        self.role = role
        self.expiresIn = expiresIn
    }

    enum CodingKeys: String, CodingKey {
        case name, role
        case expiresIn = "expires_in"
    }
}
