import NIOCore

/// Decides whether a request may proceed, given the buckets that apply to it.
///
/// Kept apart from its Redis implementation (as in envoyproxy/ratelimit) so the HTTP layer
/// depends only on this interface. A limiter has one way to decide, on an event loop
/// (``check(_:on:then:)``); the async ``check(_:)`` waits on it.
public protocol RateLimiter: Sendable {
    /// Where checks made from a Swift task run.
    var eventLoopGroup: any EventLoopGroup { get }

    /// The check of `buckets`, built once to be sent many times.
    func prepare(_ buckets: [RateLimitBucket]) -> RateLimitCheck

    /// Checks every bucket in one atomic step: the request is admitted only if each bucket has
    /// a token, and then takes one from each; if any bucket refuses, none is spent. The
    /// decision, or the store's failure to make one within its timeout, is handed to
    /// `decided` on `eventLoop`; the caller applies its failure policy (fail closed for auth
    /// endpoints, `on_store_error` for proxied routes).
    ///
    /// A callback rather than a future, so a caller that completes its own promise with the
    /// answer (the proxy's admission) costs one promise per request, not two.
    func check(_ check: RateLimitCheck, on eventLoop: any EventLoop, then decided: @escaping RateLimitDecided)

    /// Gives back one token to `bucket`, never past its capacity: for a budget of failures,
    /// where an attempt takes a token up front (so concurrent attempts cannot all slip past
    /// the count) and one that succeeded returns it.
    func refund(_ bucket: RateLimitBucket) async throws
}

/// What a check on an event loop hands its decision, or the store's failure to make one, to.
public typealias RateLimitDecided = @Sendable (Result<RateLimitDecision, any Error>) -> Void

extension RateLimiter {
    /// ``check(_:on:then:)`` of `buckets` for a Swift task, on one of the limiter's loops.
    public func check(_ buckets: [RateLimitBucket]) async throws -> RateLimitDecision {
        let prepared = prepare(buckets)
        let eventLoop = eventLoopGroup.any()
        return try await withCheckedThrowingContinuation { continuation in
            check(prepared, on: eventLoop) { continuation.resume(with: $0) }
        }
    }
}
