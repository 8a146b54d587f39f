/// Why forwarding to an upstream failed, in the words the metrics and the logs use.
///
/// Mapped to the client's response in one place, ``ProxyExchange``: before the response
/// head, refused/closed/malformed are `502 UPSTREAM_UNAVAILABLE` and timeout is
/// `504 UPSTREAM_TIMEOUT`; after it, any of them aborts the client's connection.
package enum UpstreamError: Error, Equatable, CustomStringConvertible {
    /// The TCP connect failed or timed out.
    case refused
    /// The connection closed or reset before the response ended.
    case closed
    /// Nothing arrived within the route's timeout.
    case timeout
    /// The upstream sent something that is not HTTP/1.1, or sent it while idle.
    case malformedResponse

    /// The `kind` label of `gateway_upstream_errors_total`.
    package var description: String {
        switch self {
        case .refused: "refused"
        case .closed: "reset"
        case .timeout: "timeout"
        case .malformedResponse: "malformed"
        }
    }
}
