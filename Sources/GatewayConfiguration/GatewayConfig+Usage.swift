import Foundation

extension GatewayConfig {
    /// `usage`: the calendar of quotas and usage reports, and how long usage is kept
    /// (docs/configuration.md).
    package struct Usage: Sendable, ConfigSection {
        /// Whether calls are counted per key and day (the usage endpoints then show zeros).
        @Key("enabled") package var enabled = true
        /// An IANA zone (`Asia/Kolkata`): quota days and months and usage days start at its
        /// midnight.
        @Key("time_zone") package var timeZone = "UTC"
        /// Days a key's daily usage is kept in Redis.
        @Key("retention_days") package var retentionDays = 90

        package init() {}

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
