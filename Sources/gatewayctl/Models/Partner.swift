/// A partner as the admin API returns it.
struct Partner: Codable, Equatable {
    /// The partner's token bucket: `rate` requests per second refill it, `burst` is its size.
    /// `rate` may be fractional (one request every two seconds is `0.5`).
    struct RateLimit: Codable, Equatable {
        let rate: Double
        let burst: Int
    }

    let partnerID: String
    let name: String
    /// `active` or `disabled`.
    let status: String
    let scopes: [String]
    let rateLimit: RateLimit
    let createdAt: String

    enum CodingKeys: String, CodingKey {
        case partnerID = "partner_id"
        case name, status, scopes
        case rateLimit = "rate_limit"
        case createdAt = "created_at"
    }
}
