/// The one `route` label of request metrics, upstream metrics and the access log:
///
/// - a proxied request: its route's `name` (`echo`), the same in every metric family;
/// - the gateway's own endpoints: the path they are registered under (`/auth/otp/verify`,
///   `/v1/partners/{id}`), placeholders and all;
/// - anything else: `unmatched`.
///
/// Never the raw path, so a scan of random URLs cannot add series: the label has one value
/// per route and endpoint, plus `unmatched`.
package enum RouteLabel {
    package static let unmatched = "unmatched"

    /// The label of an endpoint Hummingbird's router matched (`context.endpointPath`).
    package static func of(endpointPath: String?) -> String {
        guard let path = endpointPath, path != hummingbirdNotFound else { return unmatched }
        return path
    }

    /// What Hummingbird's router sets when no route matched.
    private static let hummingbirdNotFound = "NotFound"
}
