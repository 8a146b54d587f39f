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

    /// ``check(_:)`` for a caller on an event loop that carries on in callbacks: the same
    /// decision, exact and atomic, handed to `decided` on `eventLoop`. A callback rather than a
    /// future, so a caller that completes its own promise with the answer (the proxy's
    /// admission) costs one promise per request, not two.
    func check(_ check: RateLimitCheck, on eventLoop: any EventLoop, then decided: @escaping RateLimitDecided)

    /// Gives back one token to `bucket`, never past its capacity: for a budget of failures,
    /// where an attempt takes a token up front (so concurrent attempts cannot all slip past
    /// the count) and one that succeeded returns it.
    func refund(_ bucket: RateLimitBucket) async throws
}

/// What a check on an event loop hands its decision, or the store's failure to make one, to.
public typealias RateLimitDecided = @Sendable (Result<RateLimitDecision, any Error>) -> Void

extension RateLimiter {
    public func prepare(_ buckets: [RateLimitBucket]) -> RateLimitCheck {
        RateLimitCheck(buckets: buckets)
    }

    public func check(_ check: RateLimitCheck, on eventLoop: any EventLoop, then decided: @escaping RateLimitDecided) {
        eventLoop.makeFutureWithTask { try await self.check(check.buckets) }.whenComplete(decided)
    }

    /// ``check(_:on:then:)`` as a future completed on `eventLoop`.
    public func check(_ check: RateLimitCheck, on eventLoop: any EventLoop) -> EventLoopFuture<RateLimitDecision> {
        let decision = eventLoop.makePromise(of: RateLimitDecision.self)
        self.check(check, on: eventLoop) { decision.completeWith($0) }
        return decision.futureResult
    }
}
