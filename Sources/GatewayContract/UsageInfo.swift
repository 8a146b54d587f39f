/// `GET /v1/keys/{key_id}/usage` and `GET /v1/partners/{partner_id}/usage`: calls by outcome per
/// day (in `time_zone`), for one key or summed over a partner's keys.
public struct UsageInfo: Codable, Sendable, Hashable {
    public struct Day: Codable, Sendable, Hashable {
        /// `YYYY-MM-DD` in the gateway's `usage.time_zone`.
        public let date: String
        public let allowed: Int
        public let refusedAuth: Int
        public let refusedLimit: Int
        public let refusedQuota: Int
        public let upstream2xx: Int
        public let upstream4xx: Int
        public let upstream5xx: Int

        public init(date: String, allowed: Int, refusedAuth: Int, refusedLimit: Int, refusedQuota: Int, upstream2xx: Int, upstream4xx: Int, upstream5xx: Int) {
            self.date = date
            self.allowed = allowed
            self.refusedAuth = refusedAuth
            self.refusedLimit = refusedLimit
            self.refusedQuota = refusedQuota
            self.upstream2xx = upstream2xx
            self.upstream4xx = upstream4xx
            self.upstream5xx = upstream5xx
        }

        enum CodingKeys: String, CodingKey {
            case date, allowed
            case refusedAuth = "refused_auth"
            case refusedLimit = "refused_limit"
            case refusedQuota = "refused_quota"
            case upstream2xx = "upstream_2xx"
            case upstream4xx = "upstream_4xx"
            case upstream5xx = "upstream_5xx"
        }
    }

    /// Exactly one of the two is set: whose usage this is.
    public let keyID: String?
    public let partnerID: String?
    public let timeZone: String
    public let days: [Day]

    public init(keyID: String? = nil, partnerID: String? = nil, timeZone: String, days: [Day]) {
        self.keyID = keyID
        self.partnerID = partnerID
        self.timeZone = timeZone
        self.days = days
    }

    enum CodingKeys: String, CodingKey {
        case days
        case keyID = "key_id"
        case partnerID = "partner_id"
        case timeZone = "time_zone"
    }

    // Only the id the report is about appears (`key_id` or `partner_id`).
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encodeIfPresent(keyID, forKey: .keyID)
        try container.encodeIfPresent(partnerID, forKey: .partnerID)
        try container.encode(timeZone, forKey: .timeZone)
        try container.encode(days, forKey: .days)
    }
}
