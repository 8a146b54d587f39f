import Foundation

/// A partner as the admin API shows it (`GET /v1/partners/{partner_id}` and every response
/// about a partner).
public struct PartnerInfo: Codable, Sendable, Hashable {
    /// The partner's token bucket: `rate` requests per second refill it, `burst` is its
    /// capacity. `rate` may be fractional (one request every two seconds is `0.5`).
    public struct RateLimit: Codable, Sendable, Hashable {
        public let rate: Double
        public let burst: Int

        public init(rate: Double, burst: Int) {
            self.rate = rate
            self.burst = burst
        }
    }

    public let partnerID: String
    public let name: String
    /// `active` or `disabled`.
    public let status: String
    /// The scopes new keys get when none are asked for.
    public let scopes: [String]
    public let rateLimit: RateLimit
    public let createdAt: Date

    public init(partnerID: String, name: String, status: String, scopes: [String], rateLimit: RateLimit, createdAt: Date) {
        self.partnerID = partnerID
        self.name = name
        self.status = status
        self.scopes = scopes
        self.rateLimit = rateLimit
        self.createdAt = createdAt
    }

    enum CodingKeys: String, CodingKey {
        case name, status, scopes
        case partnerID = "partner_id"
        case rateLimit = "rate_limit"
        case createdAt = "created_at"
    }
}
