import Hummingbird

/// The one `route` label of request metrics, upstream metrics and the access log:
///
/// - a proxied request: its route's `name` (`echo`), the same in every metric family;
/// - the gateway's own endpoints: the path they are registered under (`/auth/otp/verify`,
///   `/v1/partners/{id}`), placeholders and all;
/// - anything else: `unmatched`.
///
/// Never the raw path, so a scan of random URLs cannot add series: the label has one value
/// per route and endpoint, plus `unmatched`.
enum RouteLabel {
    static let unmatched = "unmatched"

    static func of(_ context: some RequestContext) -> String {
        guard let path = context.endpointPath, path != hummingbirdNotFound else { return unmatched }
        return path
    }

    /// What Hummingbird's router sets when no route matched.
    private static let hummingbirdNotFound = "NotFound"
}
