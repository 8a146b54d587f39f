/// A number of calls a partner or key may make per calendar period (`usage.time_zone`).
public struct Quota: Sendable, Hashable, Codable {
    public enum Period: String, Sendable, Hashable, Codable, CaseIterable {
        case day
        case month
    }

    public var limit: Int
    public var period: Period

    public init(limit: Int, period: Period) {
        self.limit = limit
        self.period = period
    }

    /// How the registry stores it in a record's hash: `100000/month`.
    var stored: String { "\(limit)/\(period.rawValue)" }

    init?(stored: String) {
        let parts = stored.split(separator: "/")
        guard parts.count == 2, let limit = Int(parts[0]), let period = Period(rawValue: String(parts[1])) else { return nil }
        self.init(limit: limit, period: period)
    }
}
