/// The body of `POST /v1/partners/{partner_id}/keys`. Unset fields are left out: scopes then
/// default to the partner's, the key never expires, and it has no name or metadata.
public struct NewKey: Codable, Sendable, Hashable {
    public let scopes: [String]?
    /// A duration in ``GatewayDuration``'s grammar, e.g. `90d`.
    public let expiresIn: String?
    /// A label for people (`checkout-backend`), not unique and not secret.
    public let name: String?
    /// Free-form labels (`team=payments`), shown with the key and never used by the gateway.
    public let meta: [String: String]?

    public init(scopes: [String]? = nil, expiresIn: String? = nil, name: String? = nil, meta: [String: String]? = nil) {
        self.scopes = scopes
        self.expiresIn = expiresIn
        self.name = name
        self.meta = meta
    }

    enum CodingKeys: String, CodingKey {
        case scopes, name, meta
        case expiresIn = "expires_in"
    }
}
