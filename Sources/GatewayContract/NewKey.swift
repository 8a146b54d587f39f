import Foundation

/// The body of `POST /v1/partners/{partner_id}/keys`. Unset fields are left out: scopes then
/// default to the partner's, the key never expires, may be used from any address the
/// partner's may, has no quota, name or metadata, and gets an id the gateway issues.
public struct NewKey: Codable, Sendable, Hashable {
    /// The id to create the key under (`key_` and 16 hex), as a state file names it; nil to
    /// have one issued. An id already taken is `409 CONFLICT`.
    public let keyID: String?
    public let scopes: [String]?
    /// A duration in ``GatewayDuration``'s grammar, e.g. `90d`.
    public let expiresIn: String?
    /// When the key expires, instead of `expiresIn`: a time in the future.
    public let expiresAt: Date?
    /// A label for people (`checkout-backend`), not unique and not secret.
    public let name: String?
    /// Free-form labels (`team=payments`), shown with the key and never used by the gateway.
    public let meta: [String: String]?
    public let allowedCIDRs: [String]?
    public let quota: QuotaSetting?

    public init(
        keyID: String? = nil, scopes: [String]? = nil, expiresIn: String? = nil, expiresAt: Date? = nil, name: String? = nil,
        meta: [String: String]? = nil, allowedCIDRs: [String]? = nil, quota: QuotaSetting? = nil
    ) {
        self.keyID = keyID
        self.scopes = scopes
        self.expiresIn = expiresIn
        self.expiresAt = expiresAt
        self.name = name
        self.meta = meta
        self.allowedCIDRs = allowedCIDRs
        self.quota = quota
    }

    enum CodingKeys: String, CodingKey {
        case scopes, name, meta, quota
        case keyID = "key_id"
        case expiresIn = "expires_in"
        case expiresAt = "expires_at"
        case allowedCIDRs = "allowed_cidrs"
    }
}
