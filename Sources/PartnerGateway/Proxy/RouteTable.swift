/// The compiled `routes`, matched by longest prefix.
///
/// Paths the gateway answers itself (`/auth/`, `/partner/`, `/healthz`, `/readyz`,
/// `/.well-known/`) are never proxied, whatever a route's prefix says, so a catch-all `/`
/// route cannot shadow login or health checks.
///
/// A configuration reload replaces the routes for every holder at once (``replace(with:)``);
/// a request already matched keeps its ``ProxyRoute``, so it finishes undisturbed.
struct RouteTable: Sendable {
    static let reservedPrefixes = ["/auth", "/partner", "/healthz", "/readyz", "/.well-known"]

    private struct Compiled: Sendable {
        /// Longest prefix first, so the first match is the most specific.
        var routes: [ProxyRoute]
        /// One connection pool per upstream `host:port`, whichever routes share it.
        var pools: [String: UpstreamPool]

        init(_ routes: [GatewayConfig.Route], reusing pools: [String: UpstreamPool]) {
            var pools = pools
            self.routes = routes.map { ProxyRoute($0, pools: &pools) }.sorted { $0.prefix.count > $1.prefix.count }
            self.pools = pools
        }
    }

    private let compiled: LiveValue<Compiled>

    init(_ routes: [GatewayConfig.Route]) {
        compiled = LiveValue(Compiled(routes, reusing: [:]))
    }

    /// Compiles `routes` in place of the current ones. Upstreams that stay keep their pools
    /// (and idle connections).
    func replace(with routes: [GatewayConfig.Route]) {
        compiled.replace(Compiled(routes, reusing: compiled.value.pools))
    }

    func match(_ path: Substring) -> ProxyRoute? {
        for reserved in Self.reservedPrefixes where ProxyRoute.isUnder(path, prefix: reserved) {
            return nil
        }
        return compiled.value.routes.first { $0.matches(path) }
    }
}
