/// The compiled `routes`, matched by longest prefix.
///
/// Paths the gateway answers itself (`/auth/`, `/partner/`, `/healthz`, `/readyz`,
/// `/.well-known/`) are never proxied, whatever a route's prefix says, so a catch-all `/`
/// route cannot shadow login or health checks.
struct RouteTable: Sendable {
    static let reservedPrefixes = ["/auth", "/partner", "/healthz", "/readyz", "/.well-known"]

    /// Longest prefix first, so the first match is the most specific.
    private let routes: [ProxyRoute]

    init(_ routes: [GatewayConfig.Route]) {
        self.routes = routes.map(ProxyRoute.init).sorted { $0.prefix.count > $1.prefix.count }
    }

    func match(_ path: Substring) -> ProxyRoute? {
        for reserved in Self.reservedPrefixes where path.hasPrefix(reserved) {
            let rest = path.dropFirst(reserved.count)
            if rest.isEmpty || rest.first == "/" { return nil }
        }
        return routes.first { $0.matches(path) }
    }
}
