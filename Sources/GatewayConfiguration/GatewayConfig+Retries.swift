extension GatewayConfig.Route {
    /// Further tries of a failed request, each on another target when there is one
    /// (docs/configuration.md, "Upstream fleets", says which failures qualify).
    package struct Retries: Sendable, Hashable, ConfigSection {
        /// Tries after the first, 0...5.
        @Key("attempts") package var attempts = 1

        package init() {}
    }
}
