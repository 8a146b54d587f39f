/// A quota as the admin API reads and shows it: `{"limit": 100000, "period": "month"}`.
public struct QuotaSetting: Codable, Sendable, Hashable {
    public let limit: Int
    /// `day` or `month`: calendar periods in the gateway's `usage.time_zone`.
    public let period: String

    public init(limit: Int, period: String) {
        self.limit = limit
        self.period = period
    }
}
