import Foundation
import GatewayAdmission
import GatewayConfiguration
import GatewayObservability
import GatewayPrimitives
import Logging
import Metrics
import NIOCore

/// A `routes` entry compiled once at start-up into what the hot path needs.
///
/// A class: every request carries its route from head to access line, and each copy of a struct
/// of strings and references would retain every field.
package final class ProxyRoute: Sendable {
    package let name: String
    /// The prefix without a trailing slash (`/user`), or empty for a catch-all `/`.
    package let prefix: String
    /// The route's targets (one for a one-URL `upstream`), each with the keep-alive
    /// connections to its `host:port`, shared by every route that names the same one; none
    /// for `upstream: none`.
    package let fleet: UpstreamFleet
    /// Whether the gateway proxies the route's requests; false for `upstream: none`, which only
    /// edges ask about (``ForwardAuthorizer``) and the public listener answers `404`.
    package let hasUpstream: Bool
    /// The first target's connections.
    package var pool: UpstreamPool { fleet.targets[0].pool }
    /// The first target's `host:port` (each target's is its upstream requests' `Host`).
    package var upstreamAuthority: String { fleet.targets[0].authority }
    /// `X-Forwarded-Proto`: how clients reach the listener this route is served on, `http` or
    /// `https` (`tls` configured).
    package let clientScheme: String
    /// A path the upstream URL carries (`http://svc/api` → `/api`), prepended to every path.
    package let upstreamBasePath: String
    package let auth: GatewayConfig.Route.Auth
    package let scope: String
    package let stripPrefix: Bool
    package let timeout: Duration
    /// How long a try waits for a connection to its target: the route's `timeout`, at most 2 s,
    /// so a target that does not answer leaves time to try another (docs/DECISIONS.md, "A limit
    /// on upstream connection attempts").
    package let connectTimeout: TimeAmount
    /// Whether a WebSocket handshake may upgrade (``WebSocketHandshake``).
    package let websocket: Bool
    /// The longest silence once a response body or an upgraded connection has started.
    package let streamIdleTimeout: Duration
    package let websocketMetrics: WebSocketMetrics
    package let forwardAuthorization: Bool
    package let forwardAPIKey: Bool
    /// The routing and identity fields this route forwards (lowercase; `forward_headers`).
    package let forwardHeaders: [String]
    /// `request_headers.add`: the fields set on every forwarded request, in the file's order,
    /// after the gateway's header rules and before its identity fields (``ForwardedHeaders``).
    package let addedHeaders: [(name: String, value: String)]
    /// The client's fields dropped before forwarding: every `request_headers.remove` name and
    /// every `add` name, whose field replaces the client's (lowercase).
    package let droppedHeaders: [String]
    package let rateLimit: GatewayConfig.Route.RateLimit?
    /// What admission needs of the route (its name, auth, scope and limit above).
    package let admission: AdmissionRoute
    /// `Idempotency-Key` handling (``IdempotentRequest``); nil: the header is only forwarded.
    package let idempotency: GatewayConfig.Route.Idempotency?
    /// How long a keyed request's lock holds if its gateway dies mid-request
    /// (``IdempotentRequest/lockLifetime(timeout:attempts:)``).
    package let idempotencyLockLifetime: Duration
    /// The gateway answers CORS for this route (``CORSPolicy``); false: its upstream does.
    package let cors: Bool
    package let metrics: UpstreamMetrics
    /// Tries per target, by index; empty for a route of one target (its requests are the route's).
    package let targetRequests: [Counter]
    /// The route label of request metrics and the access log (``RouteLabel``): the name.
    package var endpointLabel: String { name }

    /// `pools` holds the pools made so far, by scheme, `host:port`, address and TLS settings;
    /// `addresses`: what the targets' host names resolved to (a name not in it is connected to
    /// by name, resolved per connection).
    package init(
        _ route: GatewayConfig.Route, clientScheme: String, addresses: UpstreamAddresses = UpstreamAddresses(),
        pools: inout [String: UpstreamPool], logger: Logger
    ) throws {
        name = route.name
        prefix = RequestPath.canonicalPrefix(route.pathPrefix)
        cors = route.cors
        self.clientScheme = clientScheme
        var targets: [UpstreamTarget] = []
        var seen = Set<String>()
        for target in route.targets {
            let url = URL(string: target.url)!
            let host = url.host!
            let secure = url.scheme == "https"
            let port = url.port ?? (secure ? 443 : 80)
            let authority = "\(host):\(port)"
            // A host name stands for each of its addresses; an address also listed on its own
            // is one target, not two.
            let resolved: [String?] = addresses.addresses(of: host).map { $0 } ?? [nil]
            for address in resolved where targets.count < 64 {
                let connectKey = address.map { Self.literal($0) + ":\(port)" } ?? authority.lowercased()
                guard seen.insert(connectKey).inserted else { continue }
                let poolKey = (secure ? "https://\(authority) \(String(describing: route.tls))" : authority) + (address.map { " @\($0)" } ?? "")
                let pool: UpstreamPool
                if let shared = pools[poolKey] {
                    pool = shared
                } else {
                    let tls = secure ? try UpstreamTLSContext(route.tls, host: host, logger: logger) : nil
                    pool = UpstreamPool(host: host, port: port, resolved: address, tls: tls)
                    pools[poolKey] = pool
                }
                // Logs and metrics name the address a resolved target connects to.
                let shown = address.map { "\(url.scheme!)://\(Self.literal($0)):\(port)\(url.path)" } ?? target.url
                targets.append(UpstreamTarget(index: targets.count, url: shown, authority: authority, weight: target.weight, pool: pool))
            }
        }
        fleet = UpstreamFleet(
            targets: targets, balance: route.balance, outlier: route.outlier, retries: route.retries.attempts, healthCheck: route.healthCheck
        )
        hasUpstream = route.hasUpstream
        upstreamBasePath = route.hasUpstream ? GatewayConfig.Route.basePath(URL(string: route.upstream)!) : ""
        auth = route.auth
        scope = route.scope
        stripPrefix = route.stripPrefix
        timeout = route.timeout.duration
        connectTimeout = min(TimeAmount(timeout), .seconds(2))
        websocket = route.websocket
        streamIdleTimeout = route.streamIdleTimeout.duration
        websocketMetrics = WebSocketMetrics(route: route.name)
        forwardAuthorization = route.forwardAuthorization
        forwardAPIKey = route.forwardAPIKey
        forwardHeaders = route.forwardHeaders.map { $0.lowercased() }
        addedHeaders = route.requestHeaders.add.map { ($0.name, $0.value) }
        droppedHeaders = (route.requestHeaders.remove + route.requestHeaders.add.map(\.name)).map { $0.lowercased() }
        rateLimit = route.rateLimit
        admission = AdmissionRoute(name: route.name, auth: route.auth, scope: route.scope, rateLimit: route.rateLimit)
        idempotency = route.idempotency
        idempotencyLockLifetime = IdempotentRequest.lockLifetime(timeout: timeout, attempts: fleet.attempts)
        metrics = UpstreamMetrics(route: route.name)
        // Exported from the start, so a dashboard and the alert on a route without a healthy
        // target see every target before anything changes.
        if !fleet.isSingle || fleet.healthCheck != nil {
            for target in fleet.targets { metrics.health(target: target.url, available: true) }
        }
        let metrics = self.metrics
        targetRequests = fleet.isSingle ? [] : fleet.targets.map { metrics.targetRequests(target: $0.url) }
    }

    /// An IP address as a URL's host: IPv6 in brackets.
    private static func literal(_ address: String) -> String {
        address.contains(":") ? "[\(address)]" : address
    }

    /// A try goes to `target` (counted per target on a route of several).
    package func trying(_ target: UpstreamTarget) {
        if !targetRequests.isEmpty { targetRequests[target.index].increment() }
    }

    /// Whether `path` falls under this route: equal to the prefix or below it on a segment
    /// boundary (`/user` matches `/user` and `/user/x`, never `/username`). Compared byte for
    /// byte on the canonical path: it runs for every request.
    package func matches(_ path: Substring) -> Bool {
        Self.isUnder(path, prefix: prefix)
    }

    /// Whether `path` is `prefix` or below it on a segment boundary; an empty prefix is `/`.
    package static func isUnder(_ path: Substring, prefix: String) -> Bool {
        let length = prefix.utf8.count
        guard length > 0 else { return true }
        // Compared with `memcmp` where both lie (always, for native strings), not by the generic
        // byte-by-byte comparison of two string views: this runs for every route on every request.
        let compared = path.utf8.withContiguousStorageIfAvailable { path in
            prefix.utf8.withContiguousStorageIfAvailable { prefix in
                path.count >= length && memcmp(path.baseAddress!, prefix.baseAddress!, length) == 0
                    && (path.count == length || path[length] == UInt8(ascii: "/"))
            }
        }
        if let compared = compared ?? nil { return compared }
        let bytes = path.utf8
        guard bytes.starts(with: prefix.utf8) else { return false }
        let rest = bytes.index(bytes.startIndex, offsetBy: length)
        return rest == bytes.endIndex || bytes[rest] == UInt8(ascii: "/")
    }

    /// The upstream request target for a client's path (already canonical: ``RequestPath``,
    /// applied by the request edge before routing) and raw query (as sent), the
    /// prefix stripped if the route says so. `target` is the client's whole target
    /// (`path?query`): a route that neither strips nor prepends sends it as it is, with no new
    /// string made.
    package func upstreamTarget(path: Substring, query: Substring?, target: String) -> String {
        if !stripPrefix && upstreamBasePath.isEmpty { return target }
        var forwardedPath = stripPrefix ? Substring(path.utf8.dropFirst(prefix.utf8.count)) : path
        if forwardedPath.isEmpty { forwardedPath = "/" }
        var target = upstreamBasePath + forwardedPath
        if let query { target += "?" + query }
        return target
    }
}
