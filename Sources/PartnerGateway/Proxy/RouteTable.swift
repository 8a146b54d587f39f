/// The compiled `routes`, matched by longest prefix.
///
/// Paths the gateway answers itself (`/auth/`, `/partner/`, `/healthz`, `/readyz`,
/// `/.well-known/`) are never proxied, whatever a route's prefix says, so a catch-all `/`
/// route cannot shadow login or health checks.
struct RouteTable: Sendable {
    static let reservedPrefixes = ["/auth", "/partner", "/healthz", "/readyz", "/.well-known"]

    /// Longest prefix first, so the first match is the most specific.
    private let routes: [ProxyRoute]

    /// One connection pool per upstream `host:port`, whichever routes share it.
    let pools: [UpstreamPool]

    init(_ routes: [GatewayConfig.Route]) {
        var pools: [String: UpstreamPool] = [:]
        self.routes = routes.map { ProxyRoute($0, pools: &pools) }.sorted { $0.prefix.count > $1.prefix.count }
        self.pools = Array(pools.values)
    }

    func match(_ path: Substring) -> ProxyRoute? {
        for reserved in Self.reservedPrefixes where ProxyRoute.isUnder(path, prefix: reserved) {
            return nil
        }
        return routes.first { $0.matches(path) }
    }
}
