extension GatewayConfig.Route {
    /// Passive outlier ejection (docs/DECISIONS.md, "Outlier ejection"): `consecutive_failures`
    /// connection failures, resets or `5xx` answers in a row take a target out for
    /// `ejection_time` × the number of times it has been ejected.
    package struct Outlier: Sendable, Hashable, ConfigSection {
        @Key("consecutive_failures") package var consecutiveFailures = 5
        @Key("ejection_time") package var ejectionTime = ConfigDuration("30s")!
        /// At most this share of the route's targets is ejected at once (at least one target
        /// may always be).
        @Key("max_ejected_percent") package var maxEjectedPercent = 50

        package init() {}
    }
}
