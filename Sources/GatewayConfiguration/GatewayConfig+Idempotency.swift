extension GatewayConfig.Route {
    /// `Idempotency-Key` on a route's `POST` and `PATCH` (docs/public-api.md, "Idempotent
    /// requests"): one upstream call per route, caller and key, its response stored for `ttl`.
    package struct Idempotency: Sendable, Hashable, ConfigSection {
        /// How long a stored response answers repeats of its key, 1s...7d.
        @Key("ttl") package var ttl = ConfigDuration("24h")!
        /// A keyed method without the header is refused `400` instead of forwarded.
        @Key("required") package var required = false
        /// Responses with a longer body are forwarded but not stored (the key is freed), so
        /// Redis memory stays bounded; 1...1 MiB.
        @Key("max_stored_body") package var maxStoredBody = 64 * 1024

        package init() {}

        /// What is wrong with these settings, under `key` (`routes[i].idempotency`).
        package func problems(key: String) -> [ConfigError] {
            var problems: [ConfigError] = []
            if !(Duration.seconds(1)...Duration.seconds(7 * 86_400)).contains(ttl.duration) {
                problems.append(ConfigError(key: "\(key).ttl", "must be between 1s and 7d"))
            }
            if !(1...(1 << 20)).contains(maxStoredBody) {
                problems.append(ConfigError(key: "\(key).max_stored_body", "must be between 1 and 1048576 bytes"))
            }
            return problems
        }
    }
}
