import Logging

/// The compiled `routes`, matched by longest prefix.
///
/// Paths the gateway answers itself (`/auth/`, `/partner/`, `/healthz`, `/readyz`,
/// `/.well-known/`) are never proxied, whatever a route's prefix says, so a catch-all `/`
/// route cannot shadow login or health checks.
struct RouteTable: Sendable {
    static let reservedPrefixes = ["/auth", "/partner", "/healthz", "/readyz", "/.well-known"]

    /// Longest prefix first, so the first match is the most specific.
    private let routes: [ProxyRoute]

    /// One connection pool per upstream `host:port` (and TLS settings), whichever routes share it.
    let pools: [UpstreamPool]

    /// `clientScheme`: `https` when the listener serving these routes has TLS, else `http`.
    init(_ routes: [GatewayConfig.Route], clientScheme: String, logger: Logger) throws {
        var pools: [String: UpstreamPool] = [:]
        self.routes = try routes.map { try ProxyRoute($0, clientScheme: clientScheme, pools: &pools, logger: logger) }
            .sorted { $0.prefix.count > $1.prefix.count }
        self.pools = Array(pools.values)
    }

    func match(_ path: Substring) -> ProxyRoute? {
        for reserved in Self.reservedPrefixes where ProxyRoute.isUnder(path, prefix: reserved) {
            return nil
        }
        return routes.first { $0.matches(path) }
    }
}
