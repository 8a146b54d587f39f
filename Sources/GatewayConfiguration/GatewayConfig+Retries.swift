extension GatewayConfig.Route {
    /// Further tries of a failed request, each on another target when there is one
    /// (docs/configuration.md, "Upstream fleets", says which failures qualify).
    package struct Retries: Sendable, Hashable, Decodable {
        /// Tries after the first, 0...5.
        package var attempts = 1

        package init() {}
        package enum CodingKeys: String, CodingKey, CaseIterable { case attempts }
        package init(from decoder: any Decoder) throws {
            self.init()
            let keys = try decoder.strictContainer(keyedBy: CodingKeys.self)
            attempts = try keys.value(.attempts, or: attempts)
        }
    }
}
