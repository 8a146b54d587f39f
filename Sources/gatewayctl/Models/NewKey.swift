/// The body of `POST /v1/partners/{partner_id}/keys`. Unset fields are left out: scopes then
/// default to the partner's, and the key never expires.
struct NewKey: Encodable, Equatable {
    let scopes: [String]?
    let expiresIn: String?

    enum CodingKeys: String, CodingKey {
        case scopes
        case expiresIn = "expires_in"
    }
}
