extension GatewayConfig.Route {
    /// Active health checks: `GET path` on every target each `interval`; `unhealthy` failures
    /// in a row take a target out of the rotation, `healthy` successes bring it back.
    package struct HealthCheck: Sendable, Hashable, Decodable {
        package var path = "/healthz"
        package var interval = ConfigDuration("5s")!
        /// A check without a `2xx` answer within it is a failure.
        package var timeout = ConfigDuration("1s")!
        package var healthy = 2
        package var unhealthy = 2

        package init() {}
        package enum CodingKeys: String, CodingKey, CaseIterable { case path, interval, timeout, healthy, unhealthy }
        package init(from decoder: any Decoder) throws {
            self.init()
            let keys = try decoder.strictContainer(keyedBy: CodingKeys.self)
            path = try keys.value(.path, or: path)
            interval = try keys.value(.interval, or: interval)
            timeout = try keys.value(.timeout, or: timeout)
            healthy = try keys.value(.healthy, or: healthy)
            unhealthy = try keys.value(.unhealthy, or: unhealthy)
        }
    }
}
