extension GatewayConfig.Route {
    /// Passive outlier ejection (docs/DECISIONS.md, "Outlier ejection"): `consecutive_failures`
    /// connection failures, resets or `5xx` answers in a row take a target out for
    /// `ejection_time` × the number of times it has been ejected.
    package struct Outlier: Sendable, Hashable, Decodable {
        package var consecutiveFailures = 5
        package var ejectionTime = ConfigDuration("30s")!
        /// At most this share of the route's targets is ejected at once (at least one target
        /// may always be).
        package var maxEjectedPercent = 50

        package init() {}
        package enum CodingKeys: String, CodingKey, CaseIterable {
            case consecutiveFailures = "consecutive_failures"
            case ejectionTime = "ejection_time"
            case maxEjectedPercent = "max_ejected_percent"
        }
        package init(from decoder: any Decoder) throws {
            self.init()
            let keys = try decoder.strictContainer(keyedBy: CodingKeys.self)
            consecutiveFailures = try keys.value(.consecutiveFailures, or: consecutiveFailures)
            ejectionTime = try keys.value(.ejectionTime, or: ejectionTime)
            maxEjectedPercent = try keys.value(.maxEjectedPercent, or: maxEjectedPercent)
        }
    }
}
