import Foundation
import GatewayConfiguration
import KeyRegistry
import RateLimit

/// The quota counters a partner's request counts against (its key's and its partner's, when
/// set), with the route's limit folded into the same check, kept per connection
/// (``AdmissionMemo``) until the period ends or the caller, route or quotas change:
/// a quota costs no Redis round trip of its own when the route has a limit, and one otherwise.
package struct QuotaBuckets {
    let keyID: String
    let keyQuota: Quota?
    let partnerID: String
    let partnerQuota: Quota?
    let route: String
    let limit: GatewayConfig.Route.RateLimit?
    /// The end of the first period to end: the check is rebuilt for the next one from then on.
    let validUntil: Date
    package let check: RateLimitCheck

    /// The counters of `identity` as of `now`; empty for a caller without quotas.
    package static func buckets(for identity: ProxyIdentity, calendar: QuotaCalendar, now: Date) -> (buckets: [RateLimitBucket], validUntil: Date) {
        var buckets: [RateLimitBucket] = []
        var validUntil = Date.distantFuture
        func add(_ quota: Quota?, _ subject: String?) {
            guard let quota, let subject else { return }
            let window = calendar.window(quota.period, containing: now)
            buckets.append(.quota(
                key: "quota:\(subject):\(window.label)", limit: quota.limit, periodEnd: Int(window.end.timeIntervalSince1970.rounded(.up))
            ))
            validUntil = min(validUntil, window.end)
        }
        add(identity.keyQuota, identity.keyID.map { "key:\($0)" })
        add(identity.partnerQuota, identity.partnerID.map { "partner:\($0)" })
        return (buckets, validUntil)
    }

    /// The memo's check, when it is still this caller's on this route in this period.
    func check(for identity: ProxyIdentity, route: String, limit: GatewayConfig.Route.RateLimit?, now: Date) -> RateLimitCheck? {
        guard now < validUntil, self.route == route, self.limit == limit, keyID == identity.keyID, partnerID == identity.partnerID,
              keyQuota == identity.keyQuota, partnerQuota == identity.partnerQuota
        else { return nil }
        return check
    }

    /// The check of `identity`'s quotas and `routeBucket` on `route`, remembered for the
    /// connection's next request; nil when the caller has no quota.
    static func made(
        for identity: ProxyIdentity, route: String, limit: GatewayConfig.Route.RateLimit?, routeBucket: RateLimitBucket?,
        calendar: QuotaCalendar, limiter: any RateLimiter, now: Date
    ) -> QuotaBuckets? {
        guard let keyID = identity.keyID, let partnerID = identity.partnerID, identity.keyQuota != nil || identity.partnerQuota != nil else {
            return nil
        }
        let (buckets, validUntil) = buckets(for: identity, calendar: calendar, now: now)
        // The route's bucket first: on Redis Cluster, where the quota's counter may sit in
        // another slot, a request the route's limit refuses then counts against no quota.
        let check = limiter.prepare((routeBucket.map { [$0] } ?? []) + buckets)
        return QuotaBuckets(
            keyID: keyID, keyQuota: identity.keyQuota, partnerID: partnerID, partnerQuota: identity.partnerQuota,
            route: route, limit: limit, validUntil: validUntil, check: check
        )
    }
}
