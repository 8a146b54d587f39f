import Logging

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
        /// One connection pool per upstream `host:port` (and TLS settings), whichever routes share it.
        var pools: [String: UpstreamPool]

        /// `clientScheme`: `https` when the listener serving these routes has TLS, else `http`.
        init(_ routes: [GatewayConfig.Route], reusing pools: [String: UpstreamPool], clientScheme: String, logger: Logger) throws {
            var pools = pools
            self.routes = try routes.map { try ProxyRoute($0, clientScheme: clientScheme, pools: &pools, logger: logger) }
                .sorted { $0.prefix.count > $1.prefix.count }
            self.pools = pools
        }
    }

    private let compiled: LiveValue<Compiled>
    private let clientScheme: String
    private let logger: Logger

    /// `clientScheme`: `https` when the listener serving these routes has TLS, else `http`.
    init(_ routes: [GatewayConfig.Route], clientScheme: String, logger: Logger) throws {
        self.clientScheme = clientScheme
        self.logger = logger
        compiled = LiveValue(try Compiled(routes, reusing: [:], clientScheme: clientScheme, logger: logger))
    }

    /// Compiles `routes` in place of the current ones. Upstreams that stay keep their pools
    /// (and idle connections). Throws, changing nothing, when an upstream's TLS files do not load.
    func replace(with routes: [GatewayConfig.Route]) throws {
        compiled.replace(try Compiled(routes, reusing: compiled.value.pools, clientScheme: clientScheme, logger: logger))
    }

    func match(_ path: Substring) -> ProxyRoute? {
        for reserved in Self.reservedPrefixes where ProxyRoute.isUnder(path, prefix: reserved) {
            return nil
        }
        return compiled.value.routes.first { $0.matches(path) }
    }
}
