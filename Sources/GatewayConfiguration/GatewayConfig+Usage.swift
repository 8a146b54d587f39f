import Foundation

extension GatewayConfig {
    /// `usage`: the calendar of quotas and usage reports, and how long usage is kept
    /// (docs/configuration.md).
    package struct Usage: Sendable, Decodable {
        /// Whether calls are counted per key and day (the usage endpoints then show zeros).
        package var enabled = true
        /// An IANA zone (`Asia/Kolkata`): quota days and months and usage days start at its
        /// midnight.
        package var timeZone = "UTC"
        /// Days a key's daily usage is kept in Redis.
        package var retentionDays = 90

        package init() {}
        package enum CodingKeys: String, CodingKey, CaseIterable {
            case enabled
            case timeZone = "time_zone"
            case retentionDays = "retention_days"
        }
        package init(from decoder: any Decoder) throws {
            self.init()
            let keys = try decoder.strictContainer(keyedBy: CodingKeys.self)
            enabled = try keys.value(.enabled, or: enabled)
            timeZone = try keys.value(.timeZone, or: timeZone)
            retentionDays = try keys.value(.retentionDays, or: retentionDays)
        }

        /// The zone, when `time_zone` names one.
        package var zone: TimeZone? { TimeZone(identifier: timeZone) }

        /// Every value the types alone cannot check, each naming its key.
        package func problems() -> [ConfigError] {
            var problems: [ConfigError] = []
            if zone == nil {
                problems.append(ConfigError(key: "usage.time_zone", "\"\(timeZone)\" is not an IANA time zone (e.g. UTC, Asia/Kolkata)"))
            }
            if !(1...3660).contains(retentionDays) {
                problems.append(ConfigError(key: "usage.retention_days", "must be between 1 and 3660"))
            }
            return problems
        }
    }
}
