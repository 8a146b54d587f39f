import KeyRegistry
import RateLimit

/// What the proxy engine tells ``UsageCounter`` about a call with a known key: a refusal by
/// the route's limit or a quota, and an admitted call's end (`allowed`, and its response's class
/// when it reached the upstream). Refusals of the key itself are counted by
/// ``APIKeyAuthenticator``.
package enum ProxyUsage {
    /// The rate-limit gate's `refused` callback for `identity`; nil without a key or counting.
    static func counter(for identity: ProxyIdentity, usage: UsageCounter?) -> (@Sendable (RateLimitDecision) -> Void)? {
        guard let usage, let keyID = identity.keyID else { return nil }
        return { decision in usage.record(keyID: keyID, decision.exceededQuota ? .refusedQuota : .refusedLimit) }
    }

    /// An admitted call has ended with `status`.
    package static func countFinished(keyID: String, status: Int, reachedUpstream: Bool, usage: UsageCounter) {
        usage.record(keyID: keyID, .allowed, also: reachedUpstream ? UsageOutcome.upstream(status: status) : nil)
    }
}
