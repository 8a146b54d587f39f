import GatewayConfiguration

/// What admission needs to know of a route: how its callers authenticate, the key scope it
/// asks for, its rate limit and its name (the assertion's audience, the bucket's key).
///
/// The proxy engine's route carries one (`ProxyRoute.admission`), made once at start-up, so
/// this library needs nothing of routes, fleets or upstreams. A class, as the route is: an
/// admission that waits on a lookup keeps it, and a struct of strings would retain each.
package final class AdmissionRoute: Sendable {
    package let name: String
    package let auth: GatewayConfig.Route.Auth
    /// The scope an API key must hold (`api_key` routes).
    package let scope: String
    package let rateLimit: GatewayConfig.Route.RateLimit?
    /// Whether the caller's limits (the route's and the key's quotas) are checked and spent;
    /// false only for a verification that names no route (``AdmissionPipeline/verify(_:scope:route:clientIP:requestID:)``).
    package let limits: Bool
    /// Whether an admitted caller gets a signed assertion: false where nobody is handed one
    /// (the verify API answers with the caller's ids instead).
    package let asserts: Bool

    package init(
        name: String, auth: GatewayConfig.Route.Auth, scope: String, rateLimit: GatewayConfig.Route.RateLimit?, limits: Bool = true,
        asserts: Bool = true
    ) {
        self.name = name
        self.auth = auth
        self.scope = scope
        self.rateLimit = rateLimit
        self.limits = limits
        self.asserts = asserts
    }
}
