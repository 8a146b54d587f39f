import GatewayConfiguration
import RateLimit

/// What admission keeps per client connection, so that it is worked out once: a keep-alive
/// connection carries one driver's token, or one partner's key, on every request.
package struct AdmissionMemo {
    package var lastToken: BearerAuthenticator.LastToken?
    package var lastKey: APIKeyAuthenticator.LastKey?
    /// The route rate-limit check of the connection's last user or partner, built once.
    package var lastLimit: LastLimit?
    /// The quota check of the connection's last key, with the route's limit folded in.
    package var lastQuota: QuotaBuckets?
    package var lastAssertion: AssertionSigner.Issued?
    /// The last caller, and the last caller with an assertion: reused while requests name
    /// the same ones, instead of being made (and their strings retained) per request.
    package var lastIdentity: ProxyIdentity?
    package var lastAsserted: ProxyIdentity?

    package init() {}

    /// A route's rate-limit check for one caller, and what it was built from.
    package struct LastLimit {
        package let route: String
        package let limit: GatewayConfig.Route.RateLimit
        package let caller: String
        package let check: RateLimitCheck

        /// The check, when it is this caller's on this route: compared where it is stored
        /// (copying the memo's entry out to compare it would retain and release each field).
        package func check(caller: String, route: String, limit: GatewayConfig.Route.RateLimit) -> RateLimitCheck? {
            self.caller == caller && self.route == route && self.limit == limit ? check : nil
        }
    }
}
