import GatewayConfiguration
import GatewayEdge
import Logging

/// The compiled `routes`, matched by longest prefix.
///
/// Paths the gateway answers itself (`/auth/`, `/partner/`, `/healthz`, `/readyz`,
/// `/.well-known/`) are never proxied, whatever a route's prefix says, so a catch-all `/`
/// route cannot shadow login or health checks.
///
/// A configuration reload replaces the routes for every holder at once (``replace(with:)``);
/// a request already matched keeps its ``ProxyRoute``, so it finishes undisturbed.
package struct RouteTable: Sendable {
    package static let reservedPrefixes = ["/auth", "/partner", "/healthz", "/readyz", "/.well-known"]

    private struct Compiled: Sendable {
        /// Longest prefix first, so the first match is the most specific.
        package var routes: [ProxyRoute]
        /// One connection pool per upstream `host:port` (and TLS settings), whichever routes share it.
        package var pools: [String: UpstreamPool]

        /// `clientScheme`: `https` when the listener serving these routes has TLS, else `http`.
        package init(_ routes: [GatewayConfig.Route], reusing pools: [String: UpstreamPool], clientScheme: String, logger: Logger) throws {
            var pools = pools
            let compiled = try routes.map { try ProxyRoute($0, clientScheme: clientScheme, pools: &pools, logger: logger) }
            // Refused here too, not only by the configuration's checks: with two routes on one
            // prefix the order of the file would pick the one that serves it.
            var seen = Set<String>()
            for (index, route) in compiled.enumerated() where !seen.insert(route.prefix).inserted {
                throw ConfigError(key: "routes[\(index)].path_prefix", "\"\(route.prefix.isEmpty ? "/" : route.prefix)\" is the prefix of another route")
            }
            self.routes = compiled.sorted { $0.prefix.utf8.count > $1.prefix.utf8.count }
            self.pools = pools
        }
    }

    private let compiled: LiveValue<Compiled>
    private let clientScheme: String
    private let logger: Logger

    /// `clientScheme`: `https` when the listener serving these routes has TLS, else `http`.
    package init(_ routes: [GatewayConfig.Route], clientScheme: String, logger: Logger) throws {
        self.clientScheme = clientScheme
        self.logger = logger
        compiled = LiveValue(try Compiled(routes, reusing: [:], clientScheme: clientScheme, logger: logger))
    }

    /// Compiles `routes` in place of the current ones. Upstreams that stay keep their pools
    /// (and idle connections). Throws, changing nothing, when an upstream's TLS files do not load.
    package func replace(with routes: [GatewayConfig.Route]) throws {
        compiled.replace(try Compiled(routes, reusing: compiled.value.pools, clientScheme: clientScheme, logger: logger))
    }

    /// Every route, as compiled by the last load or reload.
    package var all: [ProxyRoute] { compiled.value.routes }

    /// The route for `path`, if one takes it.
    package func match(_ path: Substring) -> ProxyRoute? {
        guard !Self.isReserved(path) else { return nil }
        return compiled.value.routes.first { $0.matches(path) }
    }

    /// The routes as one client connection holds them (``match(_:holding:)``): an array of its
    /// own, taken again only after a reload replaced the routes.
    package struct Held {
        fileprivate var version = -1
        fileprivate var routes: [ProxyRoute] = []

        package init() {}
    }

    /// ``match(_:)`` for the proxy engine, through the connection's `held` routes: the shared
    /// routes sit behind a lock and a reference count that every event loop writes, while a
    /// connection's own array is written by its loop alone.
    package func match(_ path: Substring, holding held: inout Held) -> ProxyRoute? {
        guard !Self.isReserved(path) else { return nil }
        let version = compiled.version
        if held.version != version {
            held.version = version
            // A new array, not a copy sharing the table's storage (and its reference count).
            held.routes = []
            held.routes.append(contentsOf: compiled.value.routes)
        }
        for route in held.routes where route.matches(path) {
            return route
        }
        return nil
    }

    private static func isReserved(_ path: Substring) -> Bool {
        reservedPrefixes.contains { ProxyRoute.isUnder(path, prefix: $0) }
    }
}

extension RouteTable: ProxiedPaths {
    package func takes(_ path: Substring) -> Bool {
        match(path) != nil
    }
}
