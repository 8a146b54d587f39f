import AsyncHTTPClient
import Foundation

/// A `routes` entry compiled once at start-up into what the hot path needs.
struct ProxyRoute: Sendable {
    let name: String
    /// The prefix without a trailing slash (`/user`), or empty for a catch-all `/`.
    let prefix: String
    /// `http://host:port` of the upstream.
    let upstreamOrigin: String
    /// A path the upstream URL carries (`http://svc/api` → `/api`), prepended to every path.
    let upstreamBasePath: String
    let auth: GatewayConfig.Route.Auth
    let scope: String
    let stripPrefix: Bool
    let timeout: Duration
    let forwardAuthorization: Bool
    let rateLimit: GatewayConfig.Route.RateLimit?

    init(_ route: GatewayConfig.Route) {
        name = route.name
        var prefix = route.pathPrefix
        while prefix.hasSuffix("/") { prefix.removeLast() }
        self.prefix = prefix
        let url = URL(string: route.upstream)!
        upstreamOrigin = "http://\(url.host!):\(url.port ?? 80)"
        var base = url.path
        while base.hasSuffix("/") { base.removeLast() }
        upstreamBasePath = base
        auth = route.auth
        scope = route.scope
        stripPrefix = route.stripPrefix
        timeout = route.timeout.duration
        forwardAuthorization = route.forwardAuthorization
        rateLimit = route.rateLimit
    }

    /// Whether `path` falls under this route: equal to the prefix or below it on a segment
    /// boundary (`/user` matches `/user` and `/user/x`, never `/username`).
    func matches(_ path: Substring) -> Bool {
        guard path.hasPrefix(prefix) else { return false }
        let rest = path.dropFirst(prefix.count)
        return rest.isEmpty || rest.first == "/" || prefix.isEmpty
    }

    /// The upstream URL for a request target (path plus raw query, both passed through as
    /// sent, percent-encoding untouched).
    func upstreamURL(path: Substring, query: Substring?) -> String {
        var forwardedPath = stripPrefix ? path.dropFirst(prefix.count) : path
        if forwardedPath.isEmpty { forwardedPath = "/" }
        var url = upstreamOrigin + upstreamBasePath + forwardedPath
        if let query { url += "?" + query }
        return url
    }
}
