extension GatewayConfig.Route {
    /// Active health checks: `GET path` on every target each `interval`; `unhealthy` failures
    /// in a row take a target out of the rotation, `healthy` successes bring it back.
    package struct HealthCheck: Sendable, Hashable, ConfigSection {
        @Key("path") package var path = "/healthz"
        @Key("interval") package var interval = ConfigDuration("5s")!
        /// A check without a `2xx` answer within it is a failure.
        @Key("timeout") package var timeout = ConfigDuration("1s")!
        @Key("healthy") package var healthy = 2
        @Key("unhealthy") package var unhealthy = 2

        package init() {}
    }
}
