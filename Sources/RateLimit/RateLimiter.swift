import NIOCore

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

    /// The check of `buckets`, built once to be sent many times with ``check(_:on:)``.
    func prepare(_ buckets: [RateLimitBucket]) -> RateLimitCheck

    /// ``check(_:)`` for a caller on an event loop that carries on in future callbacks: the
    /// same decision, exact and atomic, completing a future on `eventLoop`.
    func check(_ check: RateLimitCheck, on eventLoop: any EventLoop) -> EventLoopFuture<RateLimitDecision>
}

extension RateLimiter {
    public func prepare(_ buckets: [RateLimitBucket]) -> RateLimitCheck {
        RateLimitCheck(buckets: buckets)
    }

    public func check(_ check: RateLimitCheck, on eventLoop: any EventLoop) -> EventLoopFuture<RateLimitDecision> {
        eventLoop.makeFutureWithTask { try await self.check(check.buckets) }
    }
}
