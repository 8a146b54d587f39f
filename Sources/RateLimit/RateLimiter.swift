/// Decides whether a request may proceed, given the buckets that apply to it.
///
/// Kept apart from its Redis implementation (as in envoyproxy/ratelimit) so the HTTP layer
/// depends only on this interface.
public protocol RateLimiter: Sendable {
    /// Checks every bucket in one atomic step: the request is admitted only if each bucket has
    /// a token, and then takes one from each; if any bucket refuses, none is spent.
    ///
    /// Throws when the store cannot answer within its timeout; the caller applies its
    /// failure policy (fail closed for auth endpoints, `on_store_error` for proxied routes).
    func check(_ buckets: [RateLimitBucket]) async throws -> RateLimitDecision
}
