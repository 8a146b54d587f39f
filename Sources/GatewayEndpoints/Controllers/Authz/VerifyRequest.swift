/// The body of `POST /v1/verify`: one credential, and optionally the scope a key must hold and
/// the route whose admission (limit and quotas) applies.
struct VerifyRequest: Decodable {
    let apiKey: String?
    let accessToken: String?
    let scope: String?
    let route: String?

    enum CodingKeys: String, CodingKey {
        case scope, route
        case apiKey = "api_key"
        case accessToken = "access_token"
    }
}
