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
    /// The networks its keys may be used from; empty for anywhere.
    public let allowedCIDRs: [String]
    /// The calls all its keys together may make per period; nil for none.
    public let quota: QuotaSetting?
    /// How many live keys its members may hold (the portal's bound; admins are not held to it).
    public let maxKeys: Int
    /// Counts the changes made to it: every change adds one. Send it back in `If-Match`
    /// (`"3"`) to change it only if nothing else has meanwhile.
    public let revision: Int

    public init(
        partnerID: String, name: String, status: String, scopes: [String], rateLimit: RateLimit, createdAt: Date,
        allowedCIDRs: [String] = [], quota: QuotaSetting? = nil, maxKeys: Int = 20, revision: Int = 0
    ) {
        self.maxKeys = maxKeys
        self.partnerID = partnerID
        self.name = name
        self.status = status
        self.scopes = scopes
        self.rateLimit = rateLimit
        self.createdAt = createdAt
        self.allowedCIDRs = allowedCIDRs
        self.quota = quota
        self.revision = revision
    }

    enum CodingKeys: String, CodingKey {
        case name, status, scopes, quota, revision
        case partnerID = "partner_id"
        case rateLimit = "rate_limit"
        case createdAt = "created_at"
        case allowedCIDRs = "allowed_cidrs"
        case maxKeys = "max_keys"
    }

    // A gateway from before allowlists and quotas sends neither; one from before max_keys or
    // revisions, not those.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        partnerID = try container.decode(String.self, forKey: .partnerID)
        name = try container.decode(String.self, forKey: .name)
        status = try container.decode(String.self, forKey: .status)
        scopes = try container.decode([String].self, forKey: .scopes)
        rateLimit = try container.decode(RateLimit.self, forKey: .rateLimit)
        createdAt = try container.decode(Date.self, forKey: .createdAt)
        allowedCIDRs = try container.decodeIfPresent([String].self, forKey: .allowedCIDRs) ?? []
        quota = try container.decodeIfPresent(QuotaSetting.self, forKey: .quota)
        maxKeys = try container.decodeIfPresent(Int.self, forKey: .maxKeys) ?? 20
        revision = try container.decodeIfPresent(Int.self, forKey: .revision) ?? 0
    }

    // Written out so an absent quota is `null`, never a missing key.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(partnerID, forKey: .partnerID)
        try container.encode(name, forKey: .name)
        try container.encode(status, forKey: .status)
        try container.encode(scopes, forKey: .scopes)
        try container.encode(rateLimit, forKey: .rateLimit)
        try container.encode(createdAt, forKey: .createdAt)
        try container.encode(allowedCIDRs, forKey: .allowedCIDRs)
        try container.encode(quota, forKey: .quota)
        try container.encode(maxKeys, forKey: .maxKeys)
        try container.encode(revision, forKey: .revision)
    }
}
