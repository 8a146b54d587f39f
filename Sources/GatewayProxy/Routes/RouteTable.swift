import Foundation
import GatewayConfiguration
import GatewayEdge
import GatewayObservability
import GatewayPrimitives
import Logging
import NIOConcurrencyHelpers

/// The compiled `routes`, matched by longest prefix.
///
/// Paths the gateway answers itself (`/auth/`, `/partner/`, `/portal/`, `/healthz`, `/readyz`,
/// `/.well-known/`) are never proxied, whatever a route's prefix says, so a catch-all `/`
/// route cannot shadow login or health checks.
///
/// A configuration reload replaces the routes for every holder at once (``replace(with:)``);
/// a request already matched keeps its ``ProxyRoute``, so it finishes undisturbed.
package struct RouteTable: Sendable {
    package static let reservedPrefixes = ["/auth", "/partner", "/portal", "/healthz", "/readyz", "/.well-known"]

    private struct Compiled: Sendable {
        /// Longest prefix first, so the first match is the most specific.
        package var routes: [ProxyRoute]
        /// One connection pool per upstream `host:port` (and TLS settings), whichever routes share it.
        package var pools: [String: UpstreamPool]
        /// The routes as configured, compiled again when their host names resolve differently.
        package var source: [GatewayConfig.Route]
        package var addresses: UpstreamAddresses

        /// `clientScheme`: `https` when the listener serving these routes has TLS, else `http`.
        package init(
            _ routes: [GatewayConfig.Route], addresses: UpstreamAddresses, reusing pools: [String: UpstreamPool],
            clientScheme: String, logger: Logger
        ) throws {
            var pools = pools
            let compiled = try routes.map { try ProxyRoute($0, clientScheme: clientScheme, addresses: addresses, pools: &pools, logger: logger) }
            // Refused here too, not only by the configuration's checks: with two routes on one
            // prefix the order of the file would pick the one that serves it.
            var seen = Set<String>()
            for (index, route) in compiled.enumerated() where !seen.insert(route.prefix).inserted {
                throw ConfigError(key: "routes[\(index)].path_prefix", "\"\(route.prefix.isEmpty ? "/" : route.prefix)\" is the prefix of another route")
            }
            self.routes = compiled.sorted { $0.prefix.utf8.count > $1.prefix.utf8.count }
            self.pools = pools
            source = routes
            self.addresses = addresses
        }
    }

    private let compiled: LiveValue<Compiled>
    /// Held while compiling, so a reload and a DNS refresh cannot undo each other.
    private let changing = NIOLockedValueBox(())
    private let clientScheme: String
    private let logger: Logger

    /// `clientScheme`: `https` when the listener serving these routes has TLS, else `http`.
    package init(_ routes: [GatewayConfig.Route], clientScheme: String, logger: Logger) throws {
        self.clientScheme = clientScheme
        self.logger = logger
        compiled = LiveValue(try Compiled(routes, addresses: UpstreamAddresses(), reusing: [:], clientScheme: clientScheme, logger: logger))
    }

    /// Compiles `routes` in place of the current ones. Upstreams that stay keep their pools
    /// (and idle connections). Throws, changing nothing, when an upstream's TLS files do not load.
    package func replace(with routes: [GatewayConfig.Route]) throws {
        try changing.withLockedValue { _ in
            let old = compiled.value
            try install(Compiled(routes, addresses: old.addresses, reusing: old.pools, clientScheme: clientScheme, logger: logger), replacing: old)
        }
    }

    /// The host names the current routes' targets are named by (IP addresses need no lookup).
    package var hostNames: Set<String> {
        Set(compiled.value.source.flatMap(\.targets).compactMap { URL(string: $0.url)?.host }.filter { !UpstreamAddresses.isIPAddress($0) })
    }

    package var addresses: UpstreamAddresses { compiled.value.addresses }

    /// Compiles the current routes again with `addresses`, if they differ from the ones in use;
    /// returns whether they did. Targets whose address stays keep their pools.
    @discardableResult
    package func resolved(_ addresses: UpstreamAddresses) throws -> Bool {
        try changing.withLockedValue { _ in
            let old = compiled.value
            guard addresses != old.addresses else { return false }
            try install(Compiled(old.source, addresses: addresses, reusing: old.pools, clientScheme: clientScheme, logger: logger), replacing: old)
            return true
        }
    }

    private func install(_ new: Compiled, replacing old: Compiled) {
        compiled.replace(new)
        // A target gone from its route leaves the health gauge: the alert on a route without a
        // healthy target must not count an instance that is no longer there.
        let kept = Set(new.routes.flatMap { route in route.fleet.targets.map { [route.name, $0.url] } })
        for route in old.routes {
            for target in route.fleet.targets where !kept.contains([route.name, target.url]) {
                UpstreamMetrics.forgetHealth(route: route.name, target: target.url)
            }
        }
    }

    /// Every route, as compiled by the last load or reload.
    package var all: [ProxyRoute] { compiled.value.routes }

    /// The route for `path`, if one takes it.
    package func match(_ path: Substring) -> ProxyRoute? {
        Self.route(for: path, in: compiled.value.routes)
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
        return Self.route(for: path, in: held.routes)
    }

    /// The route both readings of `path` agree on: as it is, and without its segments' `;`
    /// parameters (``RequestPath/withoutParameters(_:)``). Where they differ no route takes it
    /// (`404`): `/open/admin;x/secret` would pass under `/open`, while a servlet upstream
    /// serves it as `/open/admin/secret`, which a stricter route `/open/admin` guards.
    private static func route(for path: Substring, in routes: [ProxyRoute]) -> ProxyRoute? {
        let route = first(for: path, in: routes)
        guard let bare = RequestPath.withoutParameters(path) else { return route }
        return first(for: bare, in: routes) === route ? route : nil
    }

    private static func first(for path: Substring, in routes: [ProxyRoute]) -> ProxyRoute? {
        guard !isReserved(path) else { return nil }
        for route in routes where route.matches(path) {
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
        match(path)?.hasUpstream == true
    }
}
